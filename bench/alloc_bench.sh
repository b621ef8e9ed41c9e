#!/bin/bash
# --alloc against heaptrack on the same command: the bundled alloc
# workload (tests/workloads/alloc.c: malloc, calloc, malloc + realloc and
# their frees, ROUNDS_OF_WORK rounds; 4 allocations and 3 frees a round),
# run plain, under heaptrack (LD_PRELOAD), and under sample-record --alloc
# (uprobes) as it comes (-g), without call chains, with -c 10 and with
# --alloc-min-size 1000. Measures each run's wall time (the workload's
# slowdown is what a user waits for) and the CPU of all processes (user
# + system, /usr/bin/time), ROUNDS rounds in rotating order; medians, and
# each tool's slowdown against the plain run of the same round. Not run
# by CI.
#
#   bench/alloc_bench.sh                  # 5 rounds of 300,000 rounds of work
#   ROUNDS=7 ROUNDS_OF_WORK=500000 bench/alloc_bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$root/build}
PERF=${PERF:-perf}
rounds=${ROUNDS:-5}
work_rounds=${ROUNDS_OF_WORK:-300000}
record="$BUILD/record/sample-record"
alloc="$BUILD/tests/workloads/alloc"
source "$root/bench/common.sh"
SREC_BUILT=$record
require_tools alloc_bench "$record" "$alloc"
command -v heaptrack >/dev/null || { echo "alloc_bench: heaptrack is needed (apt-get install heaptrack)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME COMMAND...: wall and CPU seconds into $work/NAME.
run() {
  local name=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  awk 'NF == 3 { printf "%s %.2f\n", $1, $2 + $3 }' "$work/time" >>"$work/$name"
}

tools=(plain heaptrack sample sample-nochain sample-c10 sample-min1000)
command_of() {
  case $1 in
    plain) echo "$alloc $work_rounds" ;;
    heaptrack) echo "heaptrack -o $work/ht $alloc $work_rounds" ;;
    sample) echo "$record -q --alloc -o $work/s.data -- $alloc $work_rounds" ;;
    sample-nochain) echo "$record -q --alloc --call-graph no -o $work/s.data -- $alloc $work_rounds" ;;
    sample-c10) echo "$record -q --alloc -c 10 -o $work/s.data -- $alloc $work_rounds" ;;
    sample-min1000) echo "$record -q --alloc --alloc-min-size 1000 -o $work/s.data -- $alloc $work_rounds" ;;
  esac
}

machine_info
echo "alloc: ${rounds} rounds, the alloc workload with $work_rounds rounds of work"
for round in $(seq "$rounds"); do
  for i in $(seq 0 $((${#tools[@]} - 1))); do
    tool=${tools[$(((i + round) % ${#tools[@]}))]}
    rm -f "$work"/ht*.zst
    # The kernel unregisters the last run's uprobes after it (80 ms each,
    # in the recorder's child): a run started at once would wait for it.
    sleep 1
    # shellcheck disable=SC2046
    run "$tool" $(command_of "$tool")
  done
  echo "  round $round done"
done
python3 - "$work" "${tools[@]}" <<'PY'
import statistics, sys
work, tools = sys.argv[1], sys.argv[2:]
runs = {t: [tuple(map(float, line.split())) for line in open(f"{work}/{t}")] for t in tools}
plain = [wall for wall, _ in runs["plain"]]
print(f"{'tool':<16} {'wall s':>8} {'CPU s':>8} {'slowdown':>9} {'/ heaptrack':>12}")
heaptrack = [wall for wall, _ in runs["heaptrack"]]
for t in tools:
    wall = [w for w, _ in runs[t]]
    cpu = [c for _, c in runs[t]]
    slow = statistics.median(w / p for w, p in zip(wall, plain))
    vs = statistics.median(w / h for w, h in zip(wall, heaptrack))
    print(f"{t:<16} {statistics.median(wall):>8.2f} {statistics.median(cpu):>8.2f} {slow:>8.1f}x {vs:>11.2f}x")
PY
# Whether the default recording kept every call: its lost records.
"$record" -q --alloc -o "$work/s.data" -- "$alloc" "$work_rounds" >/dev/null
echo "lost records of sample-record --alloc: $("$BUILD/report/sample-report" -i "$work/s.data" --stats | awk '/lost samples:/ { print $3; exit }')"
