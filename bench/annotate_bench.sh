#!/usr/bin/env bash
# annotate_bench.sh: `sample-report --annotate` against `perf annotate
# --stdio` on the same perf.data files, the same functions, in the same run.
# perf annotate takes one symbol a run, so both tools run once per function
# (the figures are sums over a workload's functions). Prints CPU seconds
# (user + system), wall seconds and the largest peak RSS (medians over
# ROUNDS, runs interleaved) and the ratio perf / sample of each round's CPU
# (then their median).
#
# Usage: bench/annotate_bench.sh      (from any directory)
# Environment:
#   ROUNDS=5        rounds
#   SECONDS_OF=3    CPU seconds of each workload
#   BUILD=<repo>/build, PERF=/usr/bin/perf
# Workloads, each recorded once by perf (-e cpu-clock -F 4000):
#   inline: tests/workloads/shared_inline (func_a/b/c, DWARF with inlined
#           calls and source lines);
#   leaf:   tests/workloads/leaf's split mode (frameless leaves at -O2:
#           leaf_fn).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
ROUNDS=${ROUNDS:-5}
SECONDS_OF=${SECONDS_OF:-3}
SREP=$BUILD/report/sample-report
INLINE=$BUILD/tests/workloads/shared_inline
LEAF=$BUILD/tests/workloads/leaf

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools annotate_bench "$PERF" "$SREP" "$INLINE" "$LEAF" /usr/bin/time
SREC_BUILT=$SREP

TMP=$(mktemp -d "${TMPDIR:-/tmp}/annotate_bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cp "$SREP" "$INLINE" "$LEAF" "$TMP/"
SREP=$TMP/sample-report

machine_info
cd "$TMP"
"$PERF" record -q --no-buildid-cache -e cpu-clock -F 4000 -o inline.data -- \
  ./shared_inline "$SECONDS_OF" >/dev/null 2>&1
"$PERF" record -q --no-buildid-cache -e cpu-clock -F 4000 -o leaf.data -- \
  ./leaf "$SECONDS_OF" split >/dev/null 2>&1

# run TOOL DATA SYMBOLS... -> "cpu_seconds wall_seconds kilobytes", summed
# over one run a symbol (the largest RSS).
run() {
  local tool=$1 data=$2 sym cpu=0 wall=0 kb=0 u s e m
  shift 2
  for sym in "$@"; do
    if [[ $tool == perf ]]; then
      /usr/bin/time -f '%U %S %e %M' -o t.txt "$PERF" annotate --stdio -i "$data" "$sym" \
        >/dev/null 2>&1
    else
      /usr/bin/time -f '%U %S %e %M' -o t.txt "$SREP" -i "$data" --annotate "$sym" >/dev/null 2>&1
    fi
    read -r u s e m < <(tail -n 1 t.txt)
    cpu=$(python3 -c "print($cpu + $u + $s)")
    wall=$(python3 -c "print($wall + $e)")
    ((m > kb)) && kb=$m
  done
  echo "$cpu $wall $kb"
}

: >raw.tsv
for round in $(seq "$ROUNDS"); do
  for w in inline leaf; do
    if [[ $w == inline ]]; then syms="func_a func_b func_c"; else syms="leaf_fn"; fi
    # shellcheck disable=SC2086
    read -r pc pw pk <<<"$(run perf $w.data $syms)"
    # shellcheck disable=SC2086
    read -r sc sw sk <<<"$(run sample $w.data $syms)"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$w" "$pc" "$pw" "$pk" "$sc" "$sw" "$sk" \
      >>raw.tsv
  done
done

python3 - raw.tsv <<'EOF'
import statistics, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().split('\n') if l]
print('| workload | perf annotate CPU s | sample-report --annotate CPU s | speed-up (perf/sample CPU) | perf wall s | sample wall s | perf MB | sample MB |')
print('|---|---:|---:|---:|---:|---:|---:|---:|')
for w in ('inline', 'leaf'):
    r = [x for x in rows if x[1] == w]
    med = lambda i: statistics.median(float(x[i]) for x in r)
    ratio = statistics.median(float(x[2]) / max(float(x[5]), 0.005) for x in r)
    print(f'| {w} | {med(2):.3f} | {med(5):.3f} | {ratio:.1f}x | {med(3):.2f} | {med(6):.2f} | {med(4)/1024:.0f} | {med(7)/1024:.0f} |')
print(f'\nRounds: {len(rows) // 2}. Medians; the speed-up is the median of per-round ratios.')
EOF
