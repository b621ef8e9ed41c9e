#!/usr/bin/env bash
# record_bench.sh: `perf record` and `sample-record` side by side, same options,
# same workloads, same run. Prints medians over ROUNDS rounds and sample/perf
# ratios taken within each round (then the median of those ratios).
#
# Usage: bench/record_bench.sh            (from any directory)
# Environment:
#   ROUNDS=5           rounds (each round runs every configuration once)
#   WORK_SECONDS=2     CPU seconds for `split`, CPU seconds per thread for `threads`
#   FREQS="1000 10000 50000"   -F values for the workload runs (all with -g)
#   SYS_SECONDS=3      length of the -a recording (perf: -- sleep N; sample: --duration N)
#   SYS_FREQ=10000     -F of the -a recording
#   FIXED_REPS=10      invocations per round for the fixed-cost loops
#   BUILD=<repo>/build, PERF=/usr/bin/perf
#   KEEP=1             keep the scratch directory (raw timings, recordings)
#
# What is measured (every event is cpu-clock; this machine has no PMU):
#   fixed cost    `perf record -e cpu-clock -o X -- /bin/true` (default, and with
#                 --no-bpf-event) vs `sample-record -e cpu-clock -o X -- /bin/true`:
#                 CPU (user+sys of the whole command tree) and wall per invocation,
#                 from a loop of FIXED_REPS invocations under /usr/bin/time, minus the
#                 same loop running /bin/true alone.
#   workloads     split (1 thread) and threads (2 threads), -F each of FREQS, -g,
#                 default -m for both tools, then -m 8 at -F 50000. perf runs twice:
#                 plain and -z. perf always gets --no-bpf-event here (it only adds
#                 fixed start-up cost, ~1 s wall on this kind of VM; see the fixed-cost
#                 table). The workload is wrapped in /usr/bin/time inside the
#                 recorder, so its own wall and CPU under the recorder are known.
#                 Both workloads stop on their own CPU time, so the wall-clock
#                 slowdown only shows competition for CPUs; threads also reports
#                 the work it did, which gives time per unit of work (this also
#                 catches the kernel's sampling cost charged to the workload).
#   -a            machine-wide recording while a fork/exec loop runs, and the cost
#                 of the machine-wide /proc synthesis: `-a --duration 0.01` (sample)
#                 vs `-a -- sleep 0.01` (perf), without the fork loop.
# Uses /usr/bin/time, perf and python3 (for the arithmetic and the table) only.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
TIME=/usr/bin/time
ROUNDS=${ROUNDS:-5}
WORK_SECONDS=${WORK_SECONDS:-2}
FREQS=${FREQS:-"1000 10000 50000"}
SYS_SECONDS=${SYS_SECONDS:-3}
SYS_FREQ=${SYS_FREQ:-10000}
FIXED_REPS=${FIXED_REPS:-10}
SREC=$BUILD/record/sample-record
SPLIT=$BUILD/tests/workloads/split
THREADS=$BUILD/tests/workloads/threads

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools record_bench "$PERF" "$TIME" "$SREC" "$SPLIT" "$THREADS"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/record_bench.XXXXXX")
# Run a private copy: the build tree may be rebuilt while the benchmark runs.
cp "$SREC" "$TMP/sample-record"
SREC_BUILT=$SREC
SREC=$TMP/sample-record
LOOP_PID=
cleanup() {
  if [[ -n $LOOP_PID ]]; then kill "$LOOP_PID" 2>/dev/null || true; fi
  if [[ ${KEEP:-0} == 1 ]]; then echo "record_bench: scratch kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

RAW=$TMP/raw.tsv   # round  section  config  tool  metric  value
: >"$RAW"
emit() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$ROUND" "$1" "$2" "$3" "$4" "$5" >>"$RAW"; }

# /usr/bin/time -o FILE writes "Command exited with non-zero status" first on failure;
# the figures are always on the last line: wall user sys.
TFMT='%e %U %S'
t_wall() { tail -n 1 "$1" | awk '{print $1}'; }
t_cpu() { tail -n 1 "$1" | awk '{printf "%.3f\n", $2 + $3}'; }


# Runs the recorder of TOOL (perf | perfz | sample) with EXTRA options on
# WORKLOAD ARG, records figures under SECTION/CONFIG.
record_workload() { # SECTION CONFIG TOOL "EXTRA" WORKLOAD ARG
  local sec=$1 cfg=$2 tool=$3 extra=$4 wl=$5 arg=$6 out cmd
  local outer=$TMP/outer.t inner=$TMP/inner.t err=$TMP/rec.err
  rm -f "$TMP"/rec.data* "$outer" "$inner"
  out=$TMP/rec.data
  # shellcheck disable=SC2206
  local ex=($extra)
  case $tool in
    perf)   cmd=("$PERF" record --no-bpf-event -e cpu-clock "${ex[@]}" -o "$out") ;;
    perfz)  cmd=("$PERF" record --no-bpf-event -z -e cpu-clock "${ex[@]}" -o "$out") ;;
    sample) cmd=("$SREC" -e cpu-clock "${ex[@]}" -o "$out") ;;
  esac
  "$TIME" -f "$TFMT" -o "$outer" "${cmd[@]}" -- "$TIME" -f "$TFMT" -o "$inner" "$wl" "$arg" \
    >/dev/null 2>"$err" || { echo "record_bench: failed: ${cmd[*]} -- $wl $arg" >&2; cat "$err" >&2; exit 1; }
  local counts
  if [[ $tool == sample ]]; then counts=$(sample_counts "$err"); else counts=$(perf_counts "$out"); fi
  emit "$sec" "$cfg" "$tool" outer_cpu "$(t_cpu "$outer")"
  emit "$sec" "$cfg" "$tool" outer_wall "$(t_wall "$outer")"
  emit "$sec" "$cfg" "$tool" inner_cpu "$(t_cpu "$inner")"
  emit "$sec" "$cfg" "$tool" inner_wall "$(t_wall "$inner")"
  emit "$sec" "$cfg" "$tool" samples "${counts% *}"
  emit "$sec" "$cfg" "$tool" lost "${counts#* }"
  emit "$sec" "$cfg" "$tool" bytes "$(stat -c %s "$out")"
  local work
  work=$(sed -n 's/^threads-work: \([0-9]*\)$/\1/p' "$err" | tail -n 1)
  if [[ -n $work ]]; then emit "$sec" "$cfg" "$tool" work "$work"; fi
}

# Machine-wide recording of SYS_SECONDS while a fork/exec loop runs.
record_system() { # TOOL
  local tool=$1 out=$TMP/rec.data outer=$TMP/outer.t err=$TMP/rec.err cmd
  rm -f "$TMP"/rec.data* "$outer"
  case $tool in
    perf)   cmd=("$PERF" record --no-bpf-event -a -e cpu-clock -F "$SYS_FREQ" -g -o "$out" -- sleep "$SYS_SECONDS") ;;
    perfz)  cmd=("$PERF" record --no-bpf-event -z -a -e cpu-clock -F "$SYS_FREQ" -g -o "$out" -- sleep "$SYS_SECONDS") ;;
    sample) cmd=("$SREC" -a -e cpu-clock -F "$SYS_FREQ" -g -o "$out" --duration "$SYS_SECONDS") ;;
  esac
  while :; do /bin/true; done &
  LOOP_PID=$!
  sleep 0.2
  "$TIME" -f "$TFMT" -o "$outer" "${cmd[@]}" >/dev/null 2>"$err" \
    || { echo "record_bench: failed: ${cmd[*]}" >&2; cat "$err" >&2; exit 1; }
  kill "$LOOP_PID" 2>/dev/null || true
  wait "$LOOP_PID" 2>/dev/null || true
  LOOP_PID=
  local counts
  if [[ $tool == sample ]]; then counts=$(sample_counts "$err"); else counts=$(perf_counts "$out"); fi
  emit sys "-a -F $SYS_FREQ -g, fork loop" "$tool" outer_cpu "$(t_cpu "$outer")"
  emit sys "-a -F $SYS_FREQ -g, fork loop" "$tool" outer_wall "$(t_wall "$outer")"
  emit sys "-a -F $SYS_FREQ -g, fork loop" "$tool" samples "${counts% *}"
  emit sys "-a -F $SYS_FREQ -g, fork loop" "$tool" lost "${counts#* }"
  emit sys "-a -F $SYS_FREQ -g, fork loop" "$tool" bytes "$(stat -c %s "$out")"
}

# FIXED_REPS invocations of a command in a loop under one /usr/bin/time.
loop_time() { # SECTION CONFIG TOOL CMD...
  local sec=$1 cfg=$2 tool=$3; shift 3
  local t=$TMP/loop.t
  # shellcheck disable=SC2016  # $1 and $@ belong to the inner bash
  "$TIME" -f "$TFMT" -o "$t" bash -c 'n=$1; shift; for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 || exit 1; done' \
    loop "$FIXED_REPS" "$@" || { echo "record_bench: failed: $*" >&2; exit 1; }
  emit "$sec" "$cfg" "$tool" loop_cpu "$(t_cpu "$t")"
  emit "$sec" "$cfg" "$tool" loop_wall "$(t_wall "$t")"
}

echo "== record_bench: ROUNDS=$ROUNDS WORK_SECONDS=$WORK_SECONDS FREQS='$FREQS'" \
     "SYS_SECONDS=$SYS_SECONDS SYS_FREQ=$SYS_FREQ FIXED_REPS=$FIXED_REPS"
machine_info
START=$(date +%s)
# threads prints the work it did (it stops on CPU time, so sampling cost charged
# to its CPU clocks shows as less work rather than more wall time).
export THREADS_PRINT_WORK=1

for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
  echo "-- round $ROUND/$ROUNDS ($(($(date +%s) - START)) s elapsed)" >&2
  # Alternate the order of the tools between rounds.
  if ((ROUND % 2)); then TOOLS=(perf perfz sample); else TOOLS=(sample perfz perf); fi

  # Fixed cost. The baseline loop runs /bin/true alone.
  cd "$TMP"
  loop_time fixed true base /bin/true
  for tool in "${TOOLS[@]}"; do
    case $tool in
      perf)   loop_time fixed true perf "$PERF" record -e cpu-clock -o "$TMP/f.data" -- /bin/true ;;
      perfz)  loop_time fixed true perfnobpf "$PERF" record --no-bpf-event -e cpu-clock -o "$TMP/f.data" -- /bin/true ;;
      sample) loop_time fixed true sample "$SREC" -e cpu-clock -o "$TMP/f.data" -- /bin/true ;;
    esac
  done
  # Machine-wide /proc synthesis (plus start-up): -a for 0.01 s, no fork loop.
  for tool in "${TOOLS[@]}"; do
    case $tool in
      perf)   loop_time synth a perf "$PERF" record -a -e cpu-clock -o "$TMP/f.data" -- sleep 0.01 ;;
      perfz)  loop_time synth a perfnobpf "$PERF" record --no-bpf-event -a -e cpu-clock -o "$TMP/f.data" -- sleep 0.01 ;;
      sample) loop_time synth a sample "$SREC" -a -e cpu-clock -o "$TMP/f.data" --duration 0.01 ;;
    esac
  done
  loop_time synth a base sleep 0.01

  # Workloads alone, then under each recorder.
  for wl in split threads; do
    bin=$SPLIT; [[ $wl == threads ]] && bin=$THREADS
    "$TIME" -f "$TFMT" -o "$TMP/alone.t" "$bin" "$WORK_SECONDS" 2>"$TMP/alone.err"
    emit wl "$wl" alone cpu "$(t_cpu "$TMP/alone.t")"
    emit wl "$wl" alone wall "$(t_wall "$TMP/alone.t")"
    work=$(sed -n 's/^threads-work: \([0-9]*\)$/\1/p' "$TMP/alone.err" | tail -n 1)
    if [[ -n $work ]]; then emit wl "$wl" alone work "$work"; fi
    for f in $FREQS; do
      for tool in "${TOOLS[@]}"; do
        record_workload wl "$wl|-F $f -g" "$tool" "-F $f -g" "$bin" "$WORK_SECONDS"
      done
    done
    for tool in "${TOOLS[@]}"; do
      record_workload wl "$wl|-F 50000 -g -m 8" "$tool" "-F 50000 -g -m 8" "$bin" "$WORK_SECONDS"
    done
  done

  for tool in "${TOOLS[@]}"; do record_system "$tool"; done
done
echo "-- done in $(($(date +%s) - START)) s; load average now: $(cut -d' ' -f1-3 /proc/loadavg);" \
     "perf_event_max_sample_rate now: $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
echo

python3 "$HERE/record_bench_table.py" "$RAW" "$FIXED_REPS"
