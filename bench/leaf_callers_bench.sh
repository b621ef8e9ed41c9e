#!/usr/bin/env bash
# leaf_callers_bench.sh: what -g costs now that it finds the callers a
# frame-pointer chain skips (issue 29): `sample-record -g` (fp,leaf: the
# kernel's chain, 3 registers and a small user stack copy per sample)
# against `perf record -g` and `perf record -z -g` in the same run, with
# `sample-record --call-graph fp` (perf's -g exactly: the kernel's chain
# alone) beside them. Prints medians over ROUNDS rounds and ratios taken
# within each round (then the median of those ratios).
#
# Usage: bench/leaf_callers_bench.sh      (from any directory)
# Environment:
#   ROUNDS=5           rounds (each round runs every configuration once)
#   WORK_SECONDS=2     CPU seconds of each workload
#   FREQS="1000 4000"  -F values
#   WORKLOADS="chain qsort leaf goleaf"
#                      chain, qsort: tests/workloads/unwind.c with frame
#                      pointers (unwind-fp; qsort's comparator is called
#                      from libc, whose stacks vary); leaf: leaf.c's split
#                      (frameless leaves at -O2); goleaf: goleaf.go (Go's
#                      frameless leaves; left out when it was not built)
#   BUILD=<repo>/build, PERF=/usr/bin/perf
#   KEEP=1             keep the scratch directory (raw figures)
#   OWN_CACHE=1        use the user's cache (~/.cache/sample) as it is;
#                      by default the recorder starts from an empty one
#                      in the scratch directory (XDG_CACHE_HOME), so the
#                      first round pays what a first recording on a
#                      machine pays (the inflated debug files, the frames
#                      learnt of each binary) and later rounds what every
#                      recording after it does
#
# Figures as in dwarf_record_bench.sh: bytes per sample (file size /
# samples), recorder CPU (user+sys of the recorder's whole command tree
# minus the workload's own, from build/bench/cpu_time), lost samples. perf
# gets --no-bpf-event (it only adds fixed start-up cost).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
TIME=$BUILD/bench/cpu_time
ROUNDS=${ROUNDS:-5}
WORK_SECONDS=${WORK_SECONDS:-2}
FREQS=${FREQS:-"1000 4000"}
WORKLOADS=${WORKLOADS:-"chain qsort leaf goleaf"}
SREC=$BUILD/record/sample-record
FP=$BUILD/tests/workloads/unwind-fp
LEAF=$BUILD/tests/workloads/leaf
GOLEAF=$BUILD/tests/workloads/goleaf

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools leaf_callers_bench "$PERF" "$TIME" "$SREC" "$FP" "$LEAF"
if [[ ! -x $GOLEAF ]]; then
  echo "leaf_callers_bench: $GOLEAF was not built (no Go toolchain): goleaf left out" >&2
  WORKLOADS=${WORKLOADS//goleaf/}
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/leaf_callers_bench.XXXXXX")
# Private copies: the build tree may be rebuilt while the benchmark runs.
cp "$SREC" "$FP" "$LEAF" "$TIME" "$TMP/"
[[ -x $GOLEAF ]] && cp "$GOLEAF" "$TMP/"
SREC_BUILT=$SREC
SREC=$TMP/sample-record
TIME=$TMP/cpu_time
cleanup() {
  if [[ ${KEEP:-0} == 1 ]]; then echo "leaf_callers_bench: scratch kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

if [[ ${OWN_CACHE:-0} != 1 ]]; then
  export XDG_CACHE_HOME=$TMP/cache
  mkdir -p "$XDG_CACHE_HOME"
fi

RAW=$TMP/raw.tsv   # round  section  config  tool  metric  value
: >"$RAW"
emit() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$ROUND" "$1" "$2" "$3" "$4" "$5" >>"$RAW"; }
t_wall() { awk '{print $1}' "$1"; }
t_cpu() { awk '{printf "%.6f\n", $2 + $3}' "$1"; }
# sample-record's compression ratio: "(12.3x compressed)".
sample_ratio() { # STDERR_FILE -> ratio
  sed -n 's/.*(\([0-9.]*\)x compressed).*/\1/p' "$1" | tail -n 1
}

# The command of workload NAME.
workload() {
  case $1 in
    chain|qsort) echo "$TMP/unwind-fp $1 $WORK_SECONDS" ;;
    leaf)        echo "$TMP/leaf $WORK_SECONDS split" ;;
    goleaf)      echo "$TMP/goleaf $WORK_SECONDS" ;;
  esac
}

# Records workload NAME with TOOL (perf | perfz | g | fp) at -F FREQ.
record() { # NAME FREQ TOOL
  local name=$1 f=$2 tool=$3 cmd
  local out=$TMP/rec.data outer=$TMP/outer.t inner=$TMP/inner.t err=$TMP/rec.err
  rm -f "$TMP"/rec.data* "$outer" "$inner"
  case $tool in
    perf)  cmd=("$PERF" record --no-bpf-event -e cpu-clock -F "$f" -g -o "$out") ;;
    perfz) cmd=("$PERF" record --no-bpf-event -z -e cpu-clock -F "$f" -g -o "$out") ;;
    g)     cmd=("$SREC" -e cpu-clock -F "$f" -g -o "$out") ;;
    fp)    cmd=("$SREC" -e cpu-clock -F "$f" --call-graph fp -o "$out") ;;
  esac
  # shellcheck disable=SC2046
  "$TIME" "$outer" "${cmd[@]}" -- "$TIME" "$inner" $(workload "$name") >/dev/null 2>"$err" \
    || { echo "leaf_callers_bench: failed: ${cmd[*]} -- $(workload "$name")" >&2; cat "$err" >&2; exit 1; }
  local counts
  if [[ $tool == perf* ]]; then counts=$(perf_counts "$out"); else counts=$(sample_counts "$err"); fi
  local cfg="$name|-F $f"
  emit leaf "$cfg" "$tool" outer_cpu "$(t_cpu "$outer")"
  emit leaf "$cfg" "$tool" outer_wall "$(t_wall "$outer")"
  emit leaf "$cfg" "$tool" inner_cpu "$(t_cpu "$inner")"
  emit leaf "$cfg" "$tool" samples "${counts% *}"
  emit leaf "$cfg" "$tool" lost "${counts#* }"
  local bytes
  bytes=$(stat -c %s "$out")
  emit leaf "$cfg" "$tool" bytes "$bytes"
  case $tool in
    perf)  emit leaf "$cfg" "$tool" raw_bytes "$bytes" ;;
    perfz) ;;
    *)     emit leaf "$cfg" "$tool" raw_bytes "$(python3 -c "print($bytes * $(sample_ratio "$err"))")" ;;
  esac
}

echo "== leaf_callers_bench: ROUNDS=$ROUNDS WORK_SECONDS=$WORK_SECONDS FREQS='$FREQS'" \
     "WORKLOADS='$WORKLOADS'"
machine_info
START=$(date +%s)
cd "$TMP"
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
  echo "-- round $ROUND/$ROUNDS ($(($(date +%s) - START)) s elapsed)" >&2
  # Alternate the order of the tools between rounds.
  if ((ROUND % 2)); then TOOLS=(perf perfz g fp); else TOOLS=(fp g perfz perf); fi
  for name in $WORKLOADS; do
    for f in $FREQS; do
      for tool in "${TOOLS[@]}"; do record "$name" "$f" "$tool"; done
    done
  done
done
echo "-- done in $(($(date +%s) - START)) s; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 "$HERE/leaf_callers_bench_table.py" "$RAW"
