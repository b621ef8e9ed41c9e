#!/bin/bash
# sample-top against perf top in the same run: each samples every CPU at
# -F FREQ (cpu-clock) for SECONDS while one CPU-bound workload per CPU
# runs, printing a table every second (--stdio, to a file). Measures the
# CPU each tool takes (user + system of the tool and its threads, from
# /usr/bin/time) and, for sample-top, what one refresh costs (its tables
# say it: the interval's records applied, new locations named, the table
# built). ROUNDS rounds, the two tools in alternating order; medians, and
# the ratio sample-top / perf top per round. Not run by CI.
#
#   bench/top_bench.sh                       # 3 rounds of 20 s, -F 4000
#   ROUNDS=5 SECONDS_EACH=30 FREQ=4000 CALL_GRAPH=-g bench/top_bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$root/build}
PERF=${PERF:-perf}
rounds=${ROUNDS:-3}
secs=${SECONDS_EACH:-20}
freq=${FREQ:-4000}
call_graph=${CALL_GRAPH:-}
top="$BUILD/top/sample-top"
split="$BUILD/tests/workloads/split"
source "$root/bench/common.sh"
SREC_BUILT=$top
require_tools top_bench "$top" "$split"
command -v "$PERF" >/dev/null || { echo "top_bench: perf is needed (apt-get install linux-perf)" >&2; exit 1; }
work=$(mktemp -d)
workers=()
cleanup() {
  for w in "${workers[@]}"; do kill "$w" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# One busy workload per CPU for the whole run.
for _ in $(seq "$(nproc)"); do
  "$split" 100000 >/dev/null &
  workers+=($!)
done

# run TOOL ROUND: the tool's CPU seconds (user + system) into $work/TOOL.cpu.
run() {
  local tool=$1 round=$2 out="$work/$1.$2.out"
  # perf top --stdio reads keys from standard input: a pipe that stays
  # open and silent (end of file would be read as a key, over and over).
  if [[ $tool == perf ]]; then
    /usr/bin/time -f "%U %S" -o "$work/time" timeout -s INT "$secs" \
      "$PERF" top --stdio -a -e cpu-clock -F "$freq" -d 1 $call_graph >"$out" 2>"$work/err" \
      < <(sleep $((secs + 5))) || true
  else
    /usr/bin/time -f "%U %S" -o "$work/time" \
      "$top" --stdio -a -e cpu-clock -F "$freq" -d 1 --duration "$secs" $call_graph >"$out" \
      2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  fi
  # (time's first line is a note when the tool exits non-zero, as timeout makes perf)
  awk 'NF == 2 && $1 ~ /^[0-9.]+$/ { printf "%.2f\n", $1 + $2 }' "$work/time" >>"$work/$tool.cpu"
  echo "  round $round $tool: $(tail -n 1 "$work/$tool.cpu") s CPU"
}

machine_info
echo "top: ${rounds} rounds of ${secs} s, every CPU, cpu-clock -F ${freq} ${call_graph}, $(nproc) busy workloads"
for round in $(seq "$rounds"); do
  if ((round % 2)); then run sample "$round"; run perf "$round"; else run perf "$round"; run sample "$round"; fi
done
python3 - "$work" "$rounds" <<'PY'
import glob, re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
sample = [float(x) for x in open(f"{work}/sample.cpu")]
perf = [float(x) for x in open(f"{work}/perf.cpu")]
ratios = [s / p for s, p in zip(sample, perf) if p > 0]
costs, samples = [], []
for path in glob.glob(f"{work}/sample.*.out"):
    for m in re.finditer(r"last [0-9.]+ s, ([0-9]+) samples.*refreshed in ([0-9.]+) ms", open(path).read()):
        samples.append(int(m.group(1)))
        costs.append(float(m.group(2)))
# The first refresh names everything seen so far; the steady state is the rest.
print(f"CPU seconds, median: sample-top {statistics.median(sample):.2f}, perf top {statistics.median(perf):.2f}; "
      f"ratio median {statistics.median(ratios):.2f}x (per round: {', '.join(f'{r:.2f}' for r in ratios)})")
if costs:
    print(f"refresh: median {statistics.median(costs):.1f} ms for a median {statistics.median(samples)} samples "
          f"({len(costs)} refreshes; max {max(costs):.1f} ms)")
PY
