#!/usr/bin/env bash
# The whole machine during a real build (issue 60): perf and sample-record
# both record `-a -g` over the same window while g++ compiles one of our
# sources in a loop beside a busy Python loop. Then, with the load stopped,
# each report view of each file ROUNDS times in turn: CPU (user + sys) and
# peak memory, medians, and sample's over perf's. Also the files' sizes
# and the recorders' CPU over the window (sample's includes its close:
# the embedded tables).
#
#   bench/whole_machine_bench.sh [SECONDS] [ROUNDS]     (defaults 6 and 3)
#   FREQ=20000 bench/whole_machine_bench.sh 60          (-F for both tools)
#
# Views: the flat profile (--stdio --no-children), children with call
# graphs (--stdio --children -g), and sample's HTML page against `perf
# script` (what a perf user feeds a flame graph). Needs root (or
# perf_event_paranoid -1), linux-perf and g++. By hand, never in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PERF=${PERF:-$(command -v perf || true)}
SREC=$BUILD/record/sample-record
SREP=$BUILD/report/sample-report
SREC_BUILT=$SREC
# shellcheck source=bench/common.sh
source bench/common.sh
require_tools whole_machine_bench "$SREC" "$SREP"
[[ -n $PERF && -x $PERF ]] || { echo "whole_machine_bench: needs perf (linux-perf)" >&2; exit 1; }
command -v g++ >/dev/null || { echo "whole_machine_bench: needs g++" >&2; exit 1; }
seconds=${1:-6}
rounds=${2:-3}
freq=${FREQ:-}
work=$(mktemp -d)
load_pids=()
stop_load() {
  # Each load runs in a session of its own: its group goes, a compiler
  # midway included.
  for pid in "${load_pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  wait "${load_pids[@]}" 2>/dev/null || true
  load_pids=()
}
trap 'stop_load; rm -rf "$work"' EXIT

# The load: a compile loop (Debian's cc1plus has no frame pointers: its -g
# chains are mostly junk, as on a real build machine) and an interpreter.
setsid bash -c 'while :; do g++ -std=c++20 -O2 -I. -c libsample/symbols/dwarf_unit_index.cc \
  -o "$1/x.o"; done' _ "$work" >/dev/null 2>&1 &
load_pids+=($!)
setsid python3 -c 'while True: sum(i * i for i in range(10000))' &
load_pids+=($!)
sleep 2

freq_args=()
[[ -n $freq ]] && freq_args=(-F "$freq")
timed() { # OUT CMD...: CPU seconds and peak KiB of CMD into OUT
  local out=$1
  shift
  /usr/bin/time -f '%U %S %M' -o "$out" "$@"
}
timed "$work/perf.rtime" "$PERF" record -a -g -z "${freq_args[@]}" -o "$work/perf.data" \
  -- sleep "$seconds" >/dev/null 2>"$work/perf.rec" &
perf_pid=$!
timed "$work/sample.rtime" "$SREC" -a -g "${freq_args[@]}" -o "$work/sample.data" \
  -- sleep "$seconds" >/dev/null 2>"$work/sample.rec" &
sample_pid=$!
wait "$perf_pid" || { echo "whole_machine_bench: perf record failed:" >&2; cat "$work/perf.rec" >&2; exit 1; }
wait "$sample_pid" || { echo "whole_machine_bench: sample-record failed:" >&2; cat "$work/sample.rec" >&2; exit 1; }
stop_load

views=(flat children html)
perf_view() { # VIEW
  case $1 in
    flat) echo "$PERF report -i $work/perf.data --stdio --no-children" ;;
    children) echo "$PERF report -i $work/perf.data --stdio --children -g" ;;
    html) echo "$PERF script -i $work/perf.data" ;;
  esac
}
sample_view() { # VIEW
  case $1 in
    flat) echo "$SREP -i $work/sample.data --stdio --no-children" ;;
    children) echo "$SREP -i $work/sample.data --stdio --children -g" ;;
    html) echo "$SREP -i $work/sample.data -o $work/page.html" ;;
  esac
}
for ((round = 0; round < rounds; ++round)); do
  for view in "${views[@]}"; do
    # shellcheck disable=SC2046
    timed "$work/perf.$view.$round" $(perf_view "$view") >/dev/null 2>&1
    # shellcheck disable=SC2046
    timed "$work/sample.$view.$round" $(sample_view "$view") >/dev/null 2>&1
  done
done

machine_info
echo "window: ${seconds} s, -a -g ${freq_args[*]:-(default frequency)}, rounds: $rounds"
read -r perf_samples perf_lost < <(perf_counts "$work/perf.data")
read -r sample_samples sample_lost < <(sample_counts "$work/sample.rec")
echo "samples: perf $perf_samples ($perf_lost lost), sample $sample_samples ($sample_lost lost)"
python3 - "$work" "$rounds" "${views[@]}" <<'EOF'
import os
import statistics
import sys

work, rounds, views = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def measure(path):
    user, system, kib = open(path).read().split()[-3:]
    return float(user) + float(system), int(kib) / 1024

rows = []
for view in views:
    for what, index, unit in (("CPU s", 0, "s"), ("peak MB", 1, "MB")):
        perf = statistics.median(measure(f"{work}/perf.{view}.{r}")[index] for r in range(rounds))
        ours = statistics.median(measure(f"{work}/sample.{view}.{r}")[index] for r in range(rounds))
        rows.append((f"{view} {what}", perf, ours))
perf_file = os.path.getsize(f"{work}/perf.data") / 1e6
ours_file = os.path.getsize(f"{work}/sample.data") / 1e6
rows.append(("file MB (perf -z)", perf_file, ours_file))
perf_rec = measure(f"{work}/perf.rtime")
ours_rec = measure(f"{work}/sample.rtime")
rows.append(("recorder CPU s", perf_rec[0], ours_rec[0]))
rows.append(("recorder peak MB", perf_rec[1], ours_rec[1]))
print(f"| {'measure':<22} | {'perf':>9} | {'sample':>9} | {'ratio':>6} |")
print(f"|{'-' * 24}|{'-' * 11}|{'-' * 11}|{'-' * 8}|")
for name, perf, ours in rows:
    ratio = ours / perf if perf > 0 else float("nan")
    print(f"| {name:<22} | {perf:>9.3f} | {ours:>9.3f} | {ratio:>6.2f} |")
EOF
grep -h "embedded" "$work/sample.rec" || true
