#!/usr/bin/env bash
# dwarf_record_bench.sh: the cost of recording DWARF call graphs, `perf record
# --call-graph dwarf` against `sample-record --call-graph dwarf` in the same
# run, and the cost of `--call-graph fp,leaf` against `-g` for sample-record.
# Prints medians over ROUNDS rounds and ratios taken within each round (then
# the median of those ratios).
#
# Usage: bench/dwarf_record_bench.sh      (from any directory)
# Environment:
#   ROUNDS=3           rounds (each round runs every configuration once)
#   WORK_SECONDS=2     CPU seconds of `unwind chain`, per thread of `unwind threads`
#   FREQS="1000 4000"  -F values
#   MODES="chain threads"  unwind modes (also: qsort, whose stacks vary more)
#   BUILD=<repo>/build, PERF=/usr/bin/perf
#   KEEP=1             keep the scratch directory (raw figures)
#
# What is measured (every event is cpu-clock; this machine has no PMU):
#   dwarf   unwind-nofp (no frame pointers) in `chain` mode (1 thread) and
#           `threads` mode (2 threads) at each -F, recorded with
#           `--call-graph dwarf` (8192 bytes of stack, both tools' default) by
#           perf record, perf record -z and sample-record; default -m for all.
#   leaf    unwind-fp (frame pointers) in the same modes, recorded by
#           sample-record with -g and with --call-graph fp,leaf (512 bytes of
#           stack and 3 registers more per sample).
# Figures: bytes per sample (file size / samples; and before compression:
# perf's plain file, sample-record's file times the compression ratio it
# prints), recorder CPU per 1,000 samples (user+sys of the recorder's whole
# command tree minus the workload's own; the kernel's copying of the stack
# happens in the workload's context and is not in it), lost samples.
# CPU and wall times come from build/bench/cpu_time (wait4's rusage, to the
# microsecond: /usr/bin/time rounds to 10 ms, as much as some of these
# costs). perf gets --no-bpf-event (it only adds fixed start-up cost). Uses
# cpu_time, perf and python3 only.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
TIME=$BUILD/bench/cpu_time
ROUNDS=${ROUNDS:-3}
WORK_SECONDS=${WORK_SECONDS:-2}
FREQS=${FREQS:-"1000 4000"}
MODES=${MODES:-"chain threads"}
SREC=$BUILD/record/sample-record
NOFP=$BUILD/tests/workloads/unwind-nofp
FP=$BUILD/tests/workloads/unwind-fp

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools dwarf_record_bench "$PERF" "$TIME" "$SREC" "$NOFP" "$FP"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dwarf_record_bench.XXXXXX")
# Private copies: the build tree may be rebuilt while the benchmark runs.
cp "$SREC" "$NOFP" "$FP" "$TIME" "$TMP/"
SREC_BUILT=$SREC
SREC=$TMP/sample-record
NOFP=$TMP/unwind-nofp
FP=$TMP/unwind-fp
TIME=$TMP/cpu_time
cleanup() {
  if [[ ${KEEP:-0} == 1 ]]; then echo "dwarf_record_bench: scratch kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

RAW=$TMP/raw.tsv   # round  section  config  tool  metric  value
: >"$RAW"
emit() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$ROUND" "$1" "$2" "$3" "$4" "$5" >>"$RAW"; }

# cpu_time FILE CMD...: FILE holds "wall user sys".
t_wall() { awk '{print $1}' "$1"; }
t_cpu() { awk '{printf "%.6f\n", $2 + $3}' "$1"; }

# sample-record's compression ratio: "(12.3x compressed)".
sample_ratio() { # STDERR_FILE -> ratio
  sed -n 's/.*(\([0-9.]*\)x compressed).*/\1/p' "$1" | tail -n 1
}

# Records WORKLOAD MODE with TOOL (perf | perfz | sample) and OPTIONS; the
# workload runs under its own cpu_time inside the recorder's.
record() { # SECTION CONFIG TOOL "OPTIONS" WORKLOAD MODE
  local sec=$1 cfg=$2 tool=$3 opts=$4 wl=$5 mode=$6 cmd
  local out=$TMP/rec.data outer=$TMP/outer.t inner=$TMP/inner.t err=$TMP/rec.err
  rm -f "$TMP"/rec.data* "$outer" "$inner"
  # shellcheck disable=SC2206
  local ex=($opts)
  case $tool in
    perf)  cmd=("$PERF" record --no-bpf-event -e cpu-clock "${ex[@]}" -o "$out") ;;
    perfz) cmd=("$PERF" record --no-bpf-event -z -e cpu-clock "${ex[@]}" -o "$out") ;;
    *)     cmd=("$SREC" -e cpu-clock "${ex[@]}" -o "$out") ;;
  esac
  "$TIME" "$outer" "${cmd[@]}" -- "$TIME" "$inner" "$wl" "$mode" "$WORK_SECONDS" \
    >/dev/null 2>"$err" \
    || { echo "dwarf_record_bench: failed: ${cmd[*]} -- $wl $mode" >&2; cat "$err" >&2; exit 1; }
  local counts
  if [[ $tool == perf* ]]; then counts=$(perf_counts "$out"); else counts=$(sample_counts "$err"); fi
  emit "$sec" "$cfg" "$tool" outer_cpu "$(t_cpu "$outer")"
  emit "$sec" "$cfg" "$tool" outer_wall "$(t_wall "$outer")"
  emit "$sec" "$cfg" "$tool" inner_cpu "$(t_cpu "$inner")"
  emit "$sec" "$cfg" "$tool" samples "${counts% *}"
  emit "$sec" "$cfg" "$tool" lost "${counts#* }"
  local bytes
  bytes=$(stat -c %s "$out")
  emit "$sec" "$cfg" "$tool" bytes "$bytes"
  case $tool in
    perf)  emit "$sec" "$cfg" "$tool" raw_bytes "$bytes" ;;
    perfz) ;;
    *)     emit "$sec" "$cfg" "$tool" raw_bytes "$(python3 -c "print($bytes * $(sample_ratio "$err"))")" ;;
  esac
}

echo "== dwarf_record_bench: ROUNDS=$ROUNDS WORK_SECONDS=$WORK_SECONDS FREQS='$FREQS'" \
     "MODES='$MODES'"
machine_info
START=$(date +%s)
cd "$TMP"
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
  echo "-- round $ROUND/$ROUNDS ($(($(date +%s) - START)) s elapsed)" >&2
  # Alternate the order of the tools between rounds.
  if ((ROUND % 2)); then TOOLS=(perf perfz sample); LEAF=(g leaf); else
    TOOLS=(sample perfz perf); LEAF=(leaf g); fi
  for mode in $MODES; do
    for f in $FREQS; do
      for tool in "${TOOLS[@]}"; do
        record dwarf "$mode|-F $f" "$tool" "-F $f --call-graph dwarf" "$NOFP" "$mode"
      done
      for how in "${LEAF[@]}"; do
        if [[ $how == g ]]; then opts="-F $f -g"; else opts="-F $f --call-graph fp,leaf"; fi
        record leaf "$mode|-F $f" "$how" "$opts" "$FP" "$mode"
      done
    done
  done
done
echo "-- done in $(($(date +%s) - START)) s; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 "$HERE/dwarf_record_bench_table.py" "$RAW"
