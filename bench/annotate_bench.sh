#!/usr/bin/env bash
# annotate_bench.sh: `sample-report --annotate` against `perf annotate
# --stdio` on the same perf.data files, the same functions, in the same run.
#
# perf annotate takes one symbol a run: it runs once per function, and the
# perf figures are sums over a workload's functions. sample-report is timed
# both ways: once per function (the same work) and once for all of them
# (`--annotate F1 F2 ...`, how it is used), beside perf annotate's own one
# run (`perf annotate --stdio`: every function with samples, at least these
# ten). A run a function is timed twice: as a user meets it, the annotate
# cache (report/annotate_cache.h) emptied at each round's start, so that its
# first run reads the recording and the other nine the index it kept; and
# with --no-cache, every run reading the whole recording. perf's build-id
# cache (~/.debug) is left as perf record fills it. Prints CPU seconds (user +
# system), wall seconds and the largest peak RSS, medians over ROUNDS (runs
# interleaved), and the ratios perf / sample of each round's CPU and of its
# wall time (then their medians): sample-report decodes a file's chunks on
# every CPU, which costs CPU and saves wall time; perf annotate uses one.
#
# Usage: bench/annotate_bench.sh      (from any directory)
# Environment:
#   ROUNDS=3          rounds
#   WORKLOADS="inline threads cc1plus"
#   BUILD=<repo>/build, PERF=/usr/bin/perf, CXX=g++
# Workloads, each recorded once by perf (-e cpu-clock), and their 10
# hottest functions by self samples, as perf report names them:
#   inline:  tests/workloads/shared_inline, -F 4000, 3 s (func_a/b/c: DWARF
#            with inlined calls and source lines);
#   threads: tests/workloads/threads (2 threads, frame pointers), -F 50000
#            -g for ~1M samples, the report bench's workload;
#   cc1plus: $CXX -O2 -c of a <regex>-heavy file, -F 1000 --call-graph dwarf
#            (a 35 MB binary, its symbols only: Debian strips its DWARF).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
ROUNDS=${ROUNDS:-3}
WORKLOADS=${WORKLOADS:-"inline threads cc1plus"}
CXX=${CXX:-g++}
SREP=$BUILD/report/sample-report
INLINE=$BUILD/tests/workloads/shared_inline
THREADS=$BUILD/tests/workloads/threads

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools annotate_bench "$PERF" "$SREP" "$INLINE" "$THREADS" /usr/bin/time
SREC_BUILT=$SREP

TMP=$(mktemp -d "${TMPDIR:-/tmp}/annotate_bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# sample-report's caches (the annotate cache among them) in here, not $HOME.
export XDG_CACHE_HOME=$TMP/cache
cp "$SREP" "$INLINE" "$THREADS" "$TMP/"
SREP=$TMP/sample-report

machine_info
cd "$TMP"
record() { # NAME PERF_OPTIONS... -- COMMAND...
  local name=$1
  shift
  "$PERF" record -q --no-buildid-cache -e cpu-clock -o "$name.data" "$@" >/dev/null 2>&1
  # The 10 hottest named functions in user code, one a line.
  "$PERF" report -i "$name.data" --stdio --no-children --sort sym -q 2>/dev/null |
    awk '$2 == "[.]" && $3 !~ /^0x/ && n < 10 { $1 = ""; $2 = ""; sub(/^ +/, ""); print; n++ }' \
      >"$name.syms"
  echo "$name: $(wc -l <"$name.syms") functions: $(paste -sd '|' "$name.syms")"
}
for w in $WORKLOADS; do
  case $w in
    inline) record inline -F 4000 -- ./shared_inline 3 ;;
    threads) record threads -F 50000 -g -- ./threads 10 ;;
    cc1plus)
      printf '#include <regex>\n#include <map>\n#include <string>\nint f(const std::string& s) { std::map<std::string, int> m; std::regex r("(a|b)+c*"); return std::regex_match(s, r) + m.size(); }\n' >big.cc
      record cc1plus -F 1000 --call-graph dwarf -- "$CXX" -O2 -c big.cc -o big.o ;;
  esac
done

# time COMMAND... -> "cpu wall kb" of one run
timed() {
  /usr/bin/time -f '%U %S %e %M' -o t.txt "$@" >/dev/null 2>&1 || true
  awk '{ printf "%.3f %.3f %d\n", $1 + $2, $3, $4 }' <(tail -n 1 t.txt)
}
# sum LINES_OF "cpu wall kb" -> their sums (the largest kb)
sum() { awk '{ c += $1; w += $2; if ($3 > k) k = $3 } END { printf "%.3f %.3f %d\n", c, w, k }'; }

: >raw.tsv
for round in $(seq "$ROUNDS"); do
  for w in $WORKLOADS; do
    mapfile -t syms <"$w.syms"
    perf_fig=$(for s in "${syms[@]}"; do timed "$PERF" annotate --stdio -i "$w.data" "$s"; done | sum)
    rm -rf "$XDG_CACHE_HOME/sample/annotate"
    each_fig=$(for s in "${syms[@]}"; do timed "$SREP" -i "$w.data" --annotate "$s"; done | sum)
    uncached_fig=$(for s in "${syms[@]}"; do
      timed "$SREP" -i "$w.data" --annotate "$s" --no-cache
    done | sum)
    all_fig=$(timed "$SREP" -i "$w.data" --annotate "${syms[@]}" --no-cache)
    # perf's one run: every function with samples (at least these ten).
    perf_all_fig=$(timed "$PERF" annotate --stdio -i "$w.data")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$w" "$perf_fig" "$each_fig" "$all_fig" \
      "$perf_all_fig" "$uncached_fig" >>raw.tsv
  done
done

python3 - raw.tsv <<'EOF'
import statistics, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().split('\n') if l]
print('| workload | perf annotate CPU s, one run a function | sample-report, one run a function | sample-report --no-cache, one run a function | perf annotate, one run (every function) | sample-report, one run (the ten) | speed-up, a run a function | speed-up, a run a function, --no-cache | speed-up, one run each | perf wall s (a run a function) | sample wall s (a run a function) | wall speed-up, a run a function | wall speed-up, one run each | perf MB | sample MB |')
print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
for w in dict.fromkeys(r[1] for r in rows):
    r = [[x[0], x[1]] + [v.split() for v in x[2:]] for x in rows if x[1] == w]
    med = lambda f: statistics.median(f(x) for x in r)
    # Per round: perf's figure of column 2 over sample's of column i.
    ratio = lambda i, k=0: statistics.median(float(x[2 if i != 4 else 5][k]) / max(float(x[i][k]), 0.001) for x in r)
    print(f'| {w} | {med(lambda x: float(x[2][0])):.2f} | {med(lambda x: float(x[3][0])):.2f} | '
          f'{med(lambda x: float(x[6][0])):.2f} | '
          f'{med(lambda x: float(x[5][0])):.2f} | {med(lambda x: float(x[4][0])):.2f} | '
          f'{ratio(3):.1f}x | {ratio(6):.1f}x | {ratio(4):.1f}x | '
          f'{med(lambda x: float(x[2][1])):.2f} | {med(lambda x: float(x[3][1])):.2f} | '
          f'{ratio(3, 1):.1f}x | {ratio(4, 1):.1f}x | '
          f'{med(lambda x: int(x[2][2])) / 1024:.0f} | {med(lambda x: max(int(x[3][2]), int(x[4][2]))) / 1024:.0f} |')
print(f'\nRounds: {max(int(x[0]) for x in rows)}. Medians; speed-ups are medians of per-round ratios (CPU, then wall).')
EOF
