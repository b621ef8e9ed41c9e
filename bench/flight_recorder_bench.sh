#!/bin/bash
# The flight recorder's memory over a long run: sample-record
# --flight-recorder=WINDOW records the split workload (one CPU-bound
# thread, with call chains) for SECONDS, and its RSS
# is read from /proc every INTERVAL seconds. Prints the series and the
# minimum and maximum; the memory should rise for WINDOW seconds and then
# stay flat (the window's chunks plus the kept sideband). Not run by CI.
#
#   bench/flight_recorder_bench.sh            # 60 s, window 10 s, -F 4000 -g
#   SECONDS_TOTAL=60 WINDOW=10 FREQ=10000 INTERVAL=5 bench/flight_recorder_bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
total=${SECONDS_TOTAL:-60}
window=${WINDOW:-10}
freq=${FREQ:-4000}
interval=${INTERVAL:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/record/sample-record" -e cpu-clock -F "$freq" -g --flight-recorder="$window" \
  --duration "$total" -o "$work/flight.data" -- "$build/tests/workloads/split" "$((total + 60))" \
  2>"$work/record.err" &
rec=$!
echo "flight recorder: window ${window} s, -F ${freq} -g, ${total} s; RSS (KiB) every ${interval} s"
min=; max=; t=0
while kill -0 "$rec" 2>/dev/null; do
  sleep "$interval"
  t=$((t + interval))
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$rec/status" 2>/dev/null || true)
  [ -n "$rss" ] || break
  echo "  t=${t}s rss=${rss}"
  if [ -z "$min" ] || [ "$rss" -lt "$min" ]; then min=$rss; fi
  if [ -z "$max" ] || [ "$rss" -gt "$max" ]; then max=$rss; fi
done
wait "$rec" || true
echo "min ${min:-?} KiB, max ${max:-?} KiB"
grep -E "flight recorder|samples" "$work/record.err" || cat "$work/record.err"
ls -l "$work"/flight.data*
