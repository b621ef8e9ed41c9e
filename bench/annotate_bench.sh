#!/usr/bin/env bash
# annotate_bench.sh: `sample-report --annotate` against `perf annotate
# --stdio` on the same perf.data files, the same functions, in the same run.
# Prints wall seconds and peak RSS (medians over ROUNDS, runs interleaved)
# and the ratio perf / sample of each round's pair (then their median).
#
# Usage: bench/annotate_bench.sh      (from any directory)
# Environment:
#   ROUNDS=5        rounds
#   SECONDS_OF=3    CPU seconds of each workload
#   BUILD=<repo>/build, PERF=/usr/bin/perf
# Workloads, each recorded once by perf (-e cpu-clock -F 4000):
#   inline: tests/workloads/shared_inline (func_a/b/c, DWARF with inlined
#           calls and source lines);
#   xz:     Debian's xz -9 -T1 on 20 MB of random base64 (no debug info:
#           instructions only), its 3 hottest functions.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
ROUNDS=${ROUNDS:-5}
SECONDS_OF=${SECONDS_OF:-3}
SREP=$BUILD/report/sample-report
INLINE=$BUILD/tests/workloads/shared_inline

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools annotate_bench "$PERF" "$SREP" "$INLINE" /usr/bin/time
SREC_BUILT=$SREP

TMP=$(mktemp -d "${TMPDIR:-/tmp}/annotate_bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cp "$SREP" "$INLINE" "$TMP/"
SREP=$TMP/sample-report

machine_info
cd "$TMP"
"$PERF" record -q --no-buildid-cache -e cpu-clock -F 4000 -o inline.data -- \
  ./shared_inline "$SECONDS_OF" >/dev/null 2>&1
head -c 15000000 /dev/urandom | base64 >rnd.txt
"$PERF" record -q --no-buildid-cache -e cpu-clock -F 4000 -o xz.data -- \
  timeout "$SECONDS_OF" xz -9 -T1 -k -c rnd.txt >/dev/null 2>&1 || true
# xz's three hottest functions, as perf names them.
xz_symbols=$("$PERF" report -i xz.data --stdio --no-children --sort sym -q 2>/dev/null |
  awk '$2 == "[.]" {print $3} ' | head -n 3 | tr '\n' ' ')

# run TOOL DATA SYMBOLS... -> "seconds kilobytes"
run() {
  local tool=$1 data=$2
  shift 2
  if [[ $tool == perf ]]; then
    /usr/bin/time -f '%e %M' -o t.txt "$PERF" annotate --stdio -i "$data" "$@" >/dev/null 2>&1
  else
    /usr/bin/time -f '%e %M' -o t.txt "$SREP" -i "$data" --annotate "$@" >/dev/null 2>&1
  fi
  tail -n 1 t.txt
}

: >raw.tsv
for round in $(seq "$ROUNDS"); do
  for w in inline xz; do
    if [[ $w == inline ]]; then syms="func_a func_b func_c"; else syms=$xz_symbols; fi
    # shellcheck disable=SC2086
    read -r ps pk <<<"$(run perf $w.data $syms)"
    # shellcheck disable=SC2086
    read -r ss sk <<<"$(run sample $w.data $syms)"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$w" "$ps" "$pk" "$ss" "$sk" >>raw.tsv
  done
done

echo "xz functions: $xz_symbols"
python3 - raw.tsv <<'EOF'
import statistics, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().split('\n') if l]
print('| workload | perf annotate s | sample-report --annotate s | speed-up (perf/sample) | perf MB | sample MB |')
print('|---|---:|---:|---:|---:|---:|')
for w in ('inline', 'xz'):
    r = [x for x in rows if x[1] == w]
    med = lambda i: statistics.median(float(x[i]) for x in r)
    ratio = statistics.median(float(x[2]) / max(float(x[4]), 0.005) for x in r)
    print(f'| {w} | {med(2):.2f} | {med(4):.2f} | {ratio:.1f}x | {med(3)/1024:.0f} | {med(5)/1024:.0f} |')
print(f'\nRounds: {len(rows) // 2}. Medians; the speed-up is the median of per-round ratios.')
EOF
