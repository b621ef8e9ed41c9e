#!/usr/bin/env bash
# export_bench.sh: time and peak memory of every sample-report export beside
# the flat report, on recordings of ~100k and ~1M samples, with perf's
# nearest equivalents measured in the same run: `perf report --stdio` (flat)
# and `perf script` (the text flamegraph.pl / inferno / speedscope / the
# Firefox Profiler's importer start from, before any conversion of theirs).
# Prints medians over ROUNDS rounds of wall time, peak RSS and output size,
# and each figure's ratio to perf script's wall time taken within each round
# (then their median).
#
# Usage: bench/export_bench.sh            (from any directory)
# Environment:
#   SIZES="100000 1000000"   samples per recording (approximate)
#   ROUNDS=3                 runs per command
#   FREQ=50000               -F of both recordings
#   FORMATS="folded svg html pprof speedscope gecko"
#   BUILD=<repo>/build, PERF=/usr/bin/perf, KEEP=1 keeps the scratch directory
#
# Workload: the bundled `threads` (2 threads, frame pointers), recorded with
# `-e cpu-clock -F FREQ -g` by both tools, SIZE / (2 x FREQ) CPU seconds per
# thread. An export sample-report refuses is shown as n/a with its error.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
TIME=/usr/bin/time
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-"100000 1000000"}
FREQ=${FREQ:-50000}
FORMATS=${FORMATS:-"folded svg html pprof speedscope gecko"}
SREC=$BUILD/record/sample-record
SREP=$BUILD/report/sample-report
THREADS=$BUILD/tests/workloads/threads

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools export_bench "$PERF" "$TIME" "$SREC" "$SREP" "$THREADS"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/export_bench.XXXXXX")
cp "$SREC" "$SREP" "$THREADS" "$TMP/"
SREC=$TMP/sample-record
SREP=$TMP/sample-report
THREADS=$TMP/threads
cleanup() {
  if [[ ${KEEP:-0} == 1 ]]; then echo "export_bench: scratch kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

RAW=$TMP/raw.tsv  # size  what  round  wall  rss_kb  bytes  note
: >"$RAW"
echo "export_bench: $(date -u '+%F %H:%M UTC'), $(nproc) CPUs, $(uname -r), $("$PERF" version)," \
  "sample $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')" >&2

# Runs "$@" under /usr/bin/time with its output in $TMP/out; one raw line.
measure() {
  local size=$1 what=$2 round=$3
  shift 3
  local wall=nan rss=nan bytes=0 note=
  if "$TIME" -o "$TMP/time" -f '%e %M' "$@" >"$TMP/out" 2>"$TMP/err"; then
    read -r wall rss < <(tail -n 1 "$TMP/time")
    bytes=$(stat -c %s "$TMP/out")
  else
    note=$(grep -v '^Command exited' "$TMP/err" | head -n 1 | tr '\t' ' ')
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$what" "$round" "$wall" "$rss" "$bytes" \
    "$note" >>"$RAW"
}

for size in $SIZES; do
  seconds=$(python3 -c "print(round($size / (2 * $FREQ), 2))")
  pdata=$TMP/perf-$size.data
  sdata=$TMP/sample-$size.data
  echo "export_bench: recording $size samples ($seconds CPU s per thread) with each tool" >&2
  "$PERF" record -q --no-bpf-event -e cpu-clock -F "$FREQ" -g -o "$pdata" -- \
    "$THREADS" "$seconds" >/dev/null 2>"$TMP/perf-record.err"
  "$SREC" -q -e cpu-clock -F "$FREQ" -g -o "$sdata" -- "$THREADS" "$seconds" \
    >/dev/null 2>"$TMP/sample-record.err"
  samples=$("$SREP" -i "$sdata" --no-children 2>/dev/null |
    sed -n 's/^# Samples: \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
  echo "export_bench:   $samples samples in sample.data" >&2
  for ((round = 1; round <= ROUNDS; round++)); do
    measure "$size" "perf report (flat)" "$round" "$PERF" report -i "$pdata" --stdio \
      --no-children -g none
    measure "$size" "perf script" "$round" "$PERF" script -i "$pdata"
    measure "$size" "sample-report (flat)" "$round" "$SREP" -i "$sdata" --no-children
    for format in $FORMATS; do
      measure "$size" "$format" "$round" "$SREP" -i "$sdata" --format "$format"
    done
  done
  echo "export_bench:   $size done" >&2
done

python3 - "$RAW" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    size, what, rnd, wall, rss, size_b, note = line.rstrip('\n').split('\t')
    key = (int(size), what)
    if key not in rows:
        order.append(key)
    rows[key].append((int(rnd), float(wall), float(rss), int(size_b), note))

def med(values):
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float('nan')

print('| samples | output | wall s | vs perf script | peak MB | output MB |')
print('|---:|---|---:|---:|---:|---:|')
for size, what in order:
    runs = rows[(size, what)]
    notes = [r[4] for r in runs if r[4]]
    if notes:
        print(f'| {size:,} | {what} | n/a: {notes[0]} | | | |')
        continue
    script = {r[0]: r[1] for r in rows.get((size, 'perf script'), [])}
    ratios = [r[1] / script[r[0]] for r in runs if script.get(r[0])]
    print(f'| {size:,} | {what} | {med([r[1] for r in runs]):.2f} | '
          f'{med(ratios):.2f}x | {med([r[2] for r in runs]) / 1024:.0f} | '
          f'{med([r[3] for r in runs]) / 1e6:.1f} |')
PY
