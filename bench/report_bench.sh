#!/usr/bin/env bash
# report_bench.sh: `perf report` and `sample-report` side by side on the same
# workload, recorded once by each tool at the same rate, at several sizes.
# Prints medians over ROUNDS rounds of wall time and peak RSS, and the
# perf/sample ratios taken within each round (then their median).
#
# Usage: bench/report_bench.sh            (from any directory)
# Environment:
#   SIZES="100000 1000000 3000000"   samples per recording (approximate)
#   ROUNDS=3           report runs per view and tool
#   FREQ=50000         -F of both recordings
#   BUILD=<repo>/build, PERF=/usr/bin/perf
#   KEEP=1             keep the scratch directory (recordings, raw timings)
#   CALL_GRAPH=fp      or dwarf: see below
#   INPUT=perf         sample-report reads perf's own perf.data as well
#                      (the same file for both tools; sample-record is
#                      not run)
#
# Workload: the bundled `threads` (2 threads, frame pointers, a fixed call
# tree), recorded with `-e cpu-clock -F FREQ -g` by `perf record
# --no-bpf-event` and by `sample-record`; it runs SIZE / (2 x FREQ) CPU
# seconds per thread. Views, output to /dev/null:
#   flat       perf report --stdio --no-children -g none
#              sample-report --no-children
#   callgraph  perf report --stdio                 (children + call graph)
#              sample-report -g                    (children + call graph)
#   srcline    perf report --stdio --no-children -g none --sort sym,srcline
#              sample-report --no-children --sort sym,srcline
# With CALL_GRAPH=dwarf the workload is instead the bundled `unwind-nofp
# qsort` (no frame pointers; a comparison callback called from inside
# libc's qsort), recorded by both tools with `--call-graph dwarf` (8 KiB
# stack copies) and -m 1024, SIZE / FREQ CPU seconds; defaults then
# SIZES="20000 100000" and FREQ=10000 (perf.data takes ~8.5 KB a sample).
# The table then also gives sample-report's samples unwound per second.
# With CALL_GRAPH=cc1plus the workload is a compile (`g++ -O2 -c` of a
# <regex>-heavy file, as bench/annotate_bench.sh's), recorded by perf only
# with `--call-graph dwarf -F 1000`, and both tools report perf's file
# (INPUT=perf): reading perf.data against perf report; SIZES is unused.
# A view sample-report rejects is shown as n/a with its error, not skipped
# silently. Uses /usr/bin/time, perf and python3 only.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
TIME=/usr/bin/time
CALL_GRAPH=${CALL_GRAPH:-fp}
INPUT=${INPUT:-own}
ROUNDS=${ROUNDS:-3}
SREC=$BUILD/record/sample-record
SREP=$BUILD/report/sample-report
case $CALL_GRAPH in
  fp)
    SIZES=${SIZES:-"100000 1000000 3000000"}
    FREQ=${FREQ:-50000}
    THREADS=$BUILD/tests/workloads/threads
    workload_args=()
    record_args=(-g)
    threads_per_run=2 ;;
  dwarf)
    SIZES=${SIZES:-"20000 100000"}
    FREQ=${FREQ:-10000}
    THREADS=$BUILD/tests/workloads/unwind-nofp
    workload_args=(qsort)
    record_args=(--call-graph dwarf -m 1024)
    threads_per_run=1 ;;
  cc1plus)
    SIZES=cc1plus
    FREQ=${FREQ:-1000}
    INPUT=perf
    THREADS=$(command -v g++ || echo g++)
    workload_args=(-O2 -c big.cc -o big.o)
    record_args=(--call-graph dwarf)
    threads_per_run=1 ;;
  *)
    echo "report_bench: CALL_GRAPH must be fp, dwarf or cc1plus" >&2
    exit 1 ;;
esac

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools report_bench "$PERF" "$TIME" "$SREC" "$SREP" "$THREADS"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/report_bench.XXXXXX")
# Private copies: the build tree may be rebuilt while the benchmark runs.
cp "$SREC" "$SREP" "$TMP/"
SREC=$TMP/sample-record
SREP=$TMP/sample-report
if [[ $CALL_GRAPH != cc1plus ]]; then
  cp "$THREADS" "$TMP/"
  THREADS=$TMP/$(basename "$THREADS")
fi
cleanup() {
  if [[ ${KEEP:-0} == 1 ]]; then echo "report_bench: scratch kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

RAW=$TMP/raw.tsv  # size  view  tool  round  wall  rss_kb  samples  note
: >"$RAW"

echo "report_bench: $(date -u '+%F %H:%M UTC'), $(nproc) CPUs, $(uname -r), $("$PERF" version)," \
  "sample $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')" >&2

perf_samples() { "$PERF" report -i "$1" --stats 2>/dev/null | awk '
  / stats:$/ && !/^Aggregated/ { inev = 1 }
  inev && /SAMPLE events:/ && !/LOST/ { s += $3 }
  END { print s + 0 }'; }
sample_samples() { "$SREP" -i "$1" --no-children 2>/dev/null |
  sed -n 's/^# Samples: \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }'; }

if [[ $CALL_GRAPH == cc1plus ]]; then
  cd "$TMP"
  printf '#include <regex>\n#include <map>\n#include <string>\nint f(const std::string& s) { std::map<std::string, int> m; std::regex r("(a|b)+c*"); return std::regex_match(s, r) + m.size(); }\n' >big.cc
fi
for size in $SIZES; do
  if [[ $CALL_GRAPH == cc1plus ]]; then
    seconds=()
  else
    seconds=("$(python3 -c "print(round($size / ($threads_per_run * $FREQ), 2))")")
  fi
  pdata=$TMP/perf-$size.data
  sdata=$TMP/sample-$size.data
  [[ $INPUT == perf ]] && sdata=$pdata
  if [[ $CALL_GRAPH == cc1plus ]]; then
    echo "report_bench: recording the compile with perf" >&2
  else
    echo "report_bench: recording $size samples (${seconds[0]} CPU s per thread) with each tool" >&2
  fi
  "$PERF" record -q --no-bpf-event -e cpu-clock -F "$FREQ" "${record_args[@]}" -o "$pdata" -- \
    "$THREADS" "${workload_args[@]}" "${seconds[@]}" >/dev/null 2>"$TMP/perf-record.err"
  if [[ $INPUT != perf ]]; then
    "$SREC" -q -e cpu-clock -F "$FREQ" "${record_args[@]}" -o "$sdata" -- "$THREADS" \
      "${workload_args[@]}" "${seconds[@]}" >/dev/null 2>"$TMP/sample-record.err"
  fi
  psamples=$(perf_samples "$pdata")
  ssamples=$(sample_samples "$sdata")
  echo "report_bench:   perf.data $(stat -c %s "$pdata") bytes, $psamples samples;" \
    "sample-report reads $(basename "$sdata"): $(stat -c %s "$sdata") bytes, $ssamples samples" >&2
  for view in flat callgraph srcline; do
    case $view in
      flat)
        pargs=(--stdio --no-children -g none)
        sargs=(--no-children) ;;
      callgraph)
        pargs=(--stdio)
        sargs=(-g) ;;
      srcline)
        pargs=(--stdio --no-children -g none --sort sym,srcline)
        sargs=(--no-children --sort sym,srcline) ;;
    esac
    for ((round = 1; round <= ROUNDS; round++)); do
      # Alternate which tool goes first, so neither always gets the warm cache.
      order=(perf sample)
      ((round % 2 == 0)) && order=(sample perf)
      for tool in "${order[@]}"; do
        note=
        if [[ $tool == perf ]]; then
          cmd=("$PERF" report -i "$pdata" "${pargs[@]}")
          n=$psamples
        else
          cmd=("$SREP" -i "$sdata" "${sargs[@]}")
          n=$ssamples
        fi
        if "$TIME" -o "$TMP/time" -f '%e %M' "${cmd[@]}" >/dev/null 2>"$TMP/err"; then
          read -r wall rss < <(tail -n 1 "$TMP/time")
        else
          wall=nan rss=nan
          note=$(grep -v '^Usage\|^Command exited' "$TMP/err" | head -n 1 | tr '\t' ' ')
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$view" "$tool" "$round" "$wall" \
          "$rss" "$n" "$note" >>"$RAW"
      done
    done
    echo "report_bench:   $view done" >&2
  done
done

python3 "$HERE/report_bench_table.py" "$RAW" "$CALL_GRAPH"
