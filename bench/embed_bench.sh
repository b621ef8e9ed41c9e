#!/usr/bin/env bash
# embed_bench.sh: what embedding costs at the end of a recording, against
# perf's build-id pass in the same run. For each workload, sample-record
# with embedding (the default) and with --no-embed, perf record (whose
# build-id pass reads the whole file at the end) and perf record -B (without
# it): file size, CPU and wall of the whole recorder command, and the
# embedding's own time as sample-record's closing line gives it.
#
# Usage: bench/embed_bench.sh      (from any directory)
# Environment:
#   ROUNDS=3   rounds (medians are printed)
#   BUILD=<repo>/build, PERF=/usr/bin/perf, CXX=g++ (cc1plus workload)
#   KEEP=1     keep the scratch directory
#
# Workloads (every event is cpu-clock):
#   true      /bin/true: the fixed cost (target: <= 0.02 s CPU, embedding included)
#   split     -F 10000 -g, 2 CPU seconds
#   threads   -F 10000 -g, 2 threads x 2 CPU seconds
#   dwarf     unwind-nofp chain, --call-graph dwarf -F 4000, 2 CPU seconds
#   cc1plus   $CXX -O2 -c of a <regex>-heavy file, --call-graph dwarf -F 1000
#             (a 35 MB binary: what embedding costs on a large one)
#   forkloop  -a -F 10000 -g for 3 s (perf: -- sleep 3; sample-record:
#             --duration 3) while a shell loop runs /bin/true:
#             every new process is noted (its mount namespace looked at),
#             and many binaries are hit
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
CXX=${CXX:-g++}
ROUNDS=${ROUNDS:-3}
SREC=$BUILD/record/sample-record
TIME=$BUILD/bench/cpu_time
W=$BUILD/tests/workloads

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools embed_bench "$PERF" "$TIME" "$SREC" "$W/split" "$W/threads" "$W/unwind-nofp"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/embed_bench.XXXXXX")
cleanup() {
  if [[ ${KEEP:-0} == 1 ]]; then echo "embed_bench: scratch kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
cp "$SREC" "$TIME" "$W/split" "$W/threads" "$W/unwind-nofp" "$TMP/"
SREC_BUILT=$SREC
SREC=$TMP/sample-record
TIME=$TMP/cpu_time
cat >"$TMP/big.cc" <<'CXX'
#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>
std::vector<std::string> Matches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re);
       it != std::sregex_iterator(); ++it) out.push_back(it->str());
  std::sort(out.begin(), out.end());
  std::map<std::string, int> counts;
  for (auto& s : out) ++counts[s];
  std::unordered_map<std::string, std::vector<int>> where;
  for (auto& [k, v] : counts) where[k].push_back(v);
  return out;
}
CXX

RAW=$TMP/raw.tsv  # workload tool metric value
: >"$RAW"
emit() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$RAW"; }

run() { # WORKLOAD TOOL "OPTIONS" [COMMAND...]
  local wl=$1 tool=$2 opts=$3 cmd
  shift 3
  local out=$TMP/rec.data t=$TMP/rec.t err=$TMP/rec.err
  rm -f "$TMP"/rec.data* "$t"
  # shellcheck disable=SC2206
  local ex=($opts)
  case $tool in
    perf)     cmd=("$PERF" record --no-bpf-event -q -e cpu-clock "${ex[@]}" -o "$out") ;;
    perf-B)   cmd=("$PERF" record --no-bpf-event -q -B -e cpu-clock "${ex[@]}" -o "$out") ;;
    sample)   cmd=("$SREC" -e cpu-clock "${ex[@]}" -o "$out") ;;
    no-embed) cmd=("$SREC" -e cpu-clock --no-embed "${ex[@]}" -o "$out") ;;
  esac
  if (($# > 0)); then cmd+=(-- "$@"); fi
  (cd "$TMP" && "$TIME" "$t" "${cmd[@]}" >/dev/null 2>"$err") \
    || { echo "embed_bench: failed: ${cmd[*]} -- $*" >&2; cat "$err" >&2; exit 1; }
  emit "$wl" "$tool" cpu "$(awk '{printf "%.6f", $2 + $3}' "$t")"
  emit "$wl" "$tool" wall "$(awk '{print $1}' "$t")"
  emit "$wl" "$tool" bytes "$(stat -c %s "$out")"
  if [[ $tool == sample ]]; then
    emit "$wl" "$tool" embed_ms "$(sed -n 's/.*embedded .* in \([0-9.]*\) ms.*/\1/p' "$err" | tail -n 1)"
    emit "$wl" "$tool" functions "$(sed -n 's/.*embedded \([0-9]*\) function.*/\1/p' "$err" | tail -n 1)"
  fi
}

echo "== embed_bench: ROUNDS=$ROUNDS"
machine_info
START=$(date +%s)
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
  echo "-- round $ROUND/$ROUNDS ($(($(date +%s) - START)) s elapsed)" >&2
  for tool in sample no-embed perf perf-B; do
    run true "$tool" "" /bin/true
    run split "$tool" "-F 10000 -g" "$TMP/split" 2
    run threads "$tool" "-F 10000 -g" "$TMP/threads" 2
    run dwarf "$tool" "-F 4000 --call-graph dwarf" "$TMP/unwind-nofp" chain 2
    (while :; do /bin/true; done) &
    loop=$!
    if [[ $tool == perf* ]]; then
      run forkloop "$tool" "-a -F 10000 -g" sleep 3
    else
      run forkloop "$tool" "-a -F 10000 -g --duration 3"
    fi
    kill "$loop"; wait "$loop" 2>/dev/null || true
    if command -v "$CXX" >/dev/null; then
      run cc1plus "$tool" "-F 1000 --call-graph dwarf" "$CXX" -O2 -c "$TMP/big.cc" -o "$TMP/big.o"
    fi
  done
done
echo "-- done in $(($(date +%s) - START)) s; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$RAW" <<'PY'
import statistics, sys
from collections import defaultdict
v = defaultdict(list)
for line in open(sys.argv[1]):
    wl, tool, metric, value = line.rstrip("\n").split("\t")
    if value:
        v[(wl, tool, metric)].append(float(value))
def med(*key):
    values = v.get(key)
    return statistics.median(values) if values else float("nan")
workloads = []
for (wl, _, _) in v:
    if wl not in workloads:
        workloads.append(wl)
print("| workload | sample bytes | --no-embed bytes | embedded bytes | perf bytes "
      "| functions | embedding ms | sample - --no-embed CPU s | perf - perf -B CPU s "
      "| sample CPU s | perf CPU s | sample / perf CPU | sample wall s | perf wall s |")
print("|---|" + "---:|" * 14)
for wl in workloads:
    s, n, p, b = (med(wl, t, "bytes") for t in ("sample", "no-embed", "perf", "perf-B"))
    sc, nc, pc, bc = (med(wl, t, "cpu") for t in ("sample", "no-embed", "perf", "perf-B"))
    sw, pw = med(wl, "sample", "wall"), med(wl, "perf", "wall")
    print(f"| {wl} | {s:,.0f} | {n:,.0f} | {s - n:,.0f} | {p:,.0f} "
          f"| {med(wl, 'sample', 'functions'):,.0f} | {med(wl, 'sample', 'embed_ms'):.1f} "
          f"| {sc - nc:.3f} | {pc - bc:.3f} | {sc:.3f} | {pc:.3f} | {sc / pc:.2f}x "
          f"| {sw:.2f} | {pw:.2f} |")
print()
print("Medians over rounds. 'embedded bytes' is the difference of the medians of the two "
      "sample-record files; 'sample - --no-embed CPU' and 'perf - perf -B CPU' are what "
      "embedding and perf's build-id pass cost the whole recorder command.")
PY
