#!/usr/bin/env bash
# fixed_cost_bench.sh: what sample-record costs beyond its workload where
# that cost is mostly fixed (start-up, the closing facts: build-ids, kernel
# symbols, embedding), against `perf record -g` in the same run: the
# recorder's CPU (user+sys of the recorder's whole command tree minus the
# workload's own, from build/bench/cpu_time) for
#   true     -g -- /bin/true
#   sleep    -g -- sleep 1
#   leafg    -g -F 4000 -- leaf 2 split              (~8,000 samples)
#   leaffp   --call-graph fp -F 4000 -- leaf 2 split
# (perf gets the same options, -e cpu-clock and --no-bpf-event, which only
# adds start-up cost). Prints medians over ROUNDS rounds and the medians of
# the per-round ratios to perf.
#
# Usage: bench/fixed_cost_bench.sh      (from any directory)
# Environment:
#   ROUNDS=7           rounds (each round runs every configuration once)
#   OTHER=PATH         a second sample-record (another build) measured beside
#                      this one, e.g. before and after a change
#   BUILD=<repo>/build, PERF=/usr/bin/perf
#   KEEP=1             keep the scratch directory (raw figures)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
ROUNDS=${ROUNDS:-7}
SREC=$BUILD/record/sample-record
TIME=$BUILD/bench/cpu_time
LEAF=$BUILD/tests/workloads/leaf

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools fixed_cost_bench "$PERF" "$TIME" "$SREC" "$LEAF"
if [[ -n ${OTHER:-} ]]; then require_tools fixed_cost_bench "$OTHER"; fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fixed_cost_bench.XXXXXX")
# Private copies: the build tree may be rebuilt while the benchmark runs.
cp "$SREC" "$TIME" "$LEAF" "$TMP/"
SREC_BUILT=$SREC
TOOLS=(sample)
if [[ -n ${OTHER:-} ]]; then
  cp "$OTHER" "$TMP/other-sample-record"
  TOOLS+=(other)
fi
TOOLS+=(perf)
cleanup() {
  if [[ ${KEEP:-0} == 1 ]]; then echo "fixed_cost_bench: scratch kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

RAW=$TMP/raw.tsv  # round  config  tool  recorder_cpu_s
: >"$RAW"

run() { # CONFIG TOOL
  local config=$1 tool=$2 options workload recorder
  case $config in
    true)   options=(-g); workload=(/bin/true) ;;
    sleep)  options=(-g); workload=(sleep 1) ;;
    leafg)  options=(-g -F 4000); workload=("$TMP/leaf" 2 split) ;;
    leaffp) options=(--call-graph fp -F 4000); workload=("$TMP/leaf" 2 split) ;;
  esac
  case $tool in
    sample) recorder=("$TMP/sample-record" -e cpu-clock) ;;
    other)  recorder=("$TMP/other-sample-record" -e cpu-clock) ;;
    perf)   recorder=("$PERF" record --no-bpf-event -e cpu-clock) ;;
  esac
  rm -f "$TMP"/rec.data "$TMP"/rec.data.old
  "$TMP/cpu_time" "$TMP/outer" "${recorder[@]}" "${options[@]}" -o "$TMP/rec.data" -- \
    "$TMP/cpu_time" "$TMP/inner" "${workload[@]}" >/dev/null 2>"$TMP/err" ||
    { echo "fixed_cost_bench: failed: ${recorder[*]} ${options[*]}" >&2; cat "$TMP/err" >&2; exit 1; }
  printf '%s\t%s\t%s\t%s\n' "$ROUND" "$config" "$tool" \
    "$(awk 'NR == FNR { o = $2 + $3; next } { printf "%.6f", o - $2 - $3 }' "$TMP/outer" "$TMP/inner")" \
    >>"$RAW"
}

echo "== fixed_cost_bench: ROUNDS=$ROUNDS${OTHER:+ OTHER=$OTHER}"
machine_info
cd "$TMP"
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
  echo "-- round $ROUND/$ROUNDS" >&2
  for config in true sleep leafg leaffp; do
    for tool in "${TOOLS[@]}"; do run "$config" "$tool"; done
  done
done
echo "-- load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$RAW" <<'EOF'
import collections, statistics, sys
cpu = collections.defaultdict(dict)  # (config, tool) -> round -> seconds
for line in open(sys.argv[1]):
    round_, config, tool, seconds = line.split()
    cpu[(config, tool)][round_] = float(seconds)
tools = [t for t in ("sample", "other") if any(k[1] == t for k in cpu)]
head = "| config | perf record -g (ms) |" + "".join(f" {t} (ms) | {t} / perf |" for t in tools)
print(head)
print("|---" * (2 + 2 * len(tools)) + "|")
for config in ("true", "sleep", "leafg", "leaffp"):
    perf = cpu[(config, "perf")]
    row = f"| {config} | {statistics.median(perf.values()) * 1e3:.1f} |"
    for t in tools:
        mine = cpu[(config, t)]
        ratios = [mine[r] / perf[r] for r in mine if r in perf and perf[r] > 0]
        row += f" {statistics.median(mine.values()) * 1e3:.1f} | {statistics.median(ratios):.3f}x |"
    print(row)
print(f"\nRounds: {len(next(iter(cpu.values())))}. Medians over rounds; ratios are medians of "
      "per-round ratios.")
EOF
