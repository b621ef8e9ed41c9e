#!/usr/bin/env bash
# loss_bench.sh: lost samples of `perf record` and `sample-record` with small
# ring buffers, over many paired runs. Losses with a small -m come in bursts
# whenever the draining thread is not run for a few milliseconds (on a VM:
# scheduler latency, host steal, kernel threads), so a handful of rounds
# tells little; this runs PAIRS runs of each tool per workload, alternating
# the tools so that both see the same disturbances, and prints per tool how
# many runs lost samples, the total and the worst run, and the recorder's
# CPU time: user+sys of the recorder's whole command tree minus the
# workload's own (both from build/bench/cpu_time), median over the runs.
# perf's includes its build-id pass over the file at the end, which is part
# of what `perf record` costs its user.
#
# Usage: bench/loss_bench.sh            (from any directory)
# Environment:
#   PAIRS=20             runs of each tool per workload
#   WORKLOADS="split threads"
#   WORK_SECONDS=2       CPU seconds per workload thread
#   OPTS="-e cpu-clock -F 50000 -g -m 8"   options both tools get
#   BUILD=<repo>/build, PERF=/usr/bin/perf
#   KEEP=1               keep the scratch directory (per-run counts)
#   THREADS_COUNT=4      busy threads of the `threads` workload (default 2);
#                        issue 34's DWARF case: THREADS_COUNT=4 WORKLOADS=threads
#                        WORK_SECONDS=1 OPTS="-e cpu-clock -F 50000 --call-graph dwarf"
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PERF=${PERF:-/usr/bin/perf}
PAIRS=${PAIRS:-20}
WORKLOADS=${WORKLOADS:-"split threads"}
WORK_SECONDS=${WORK_SECONDS:-2}
OPTS=${OPTS:-"-e cpu-clock -F 50000 -g -m 8"}
SREC=$BUILD/record/sample-record
TIME=$BUILD/bench/cpu_time

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools loss_bench "$PERF" "$SREC" "$TIME"
for wl in $WORKLOADS; do require_tools loss_bench "$BUILD/tests/workloads/$wl"; done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/loss_bench.XXXXXX")
cp "$SREC" "$TMP/sample-record"
cp "$TIME" "$TMP/cpu_time"
TIME=$TMP/cpu_time
SREC_BUILT=$SREC
if [[ -z ${KEEP:-} ]]; then trap 'rm -rf "$TMP"' EXIT; fi

machine_info
echo "options (both tools): $OPTS; perf also --no-bpf-event; $PAIRS pairs per workload"
echo

# shellcheck disable=SC2086  # OPTS is a list of options
for wl in $WORKLOADS; do
  bin=$BUILD/tests/workloads/$wl
  for ((i = 1; i <= PAIRS; i++)); do
    # Alternate which tool goes first, so neither always follows the other.
    order="perf sample"
    ((i % 2 == 0)) && order="sample perf"
    for tool in $order; do
      rm -f "$TMP/run.data" "$TMP/run.data.old"
      if [[ $tool == perf ]]; then
        "$TIME" "$TMP/outer.t" "$PERF" record -q --no-bpf-event $OPTS -o "$TMP/run.data" -- \
          "$TIME" "$TMP/inner.t" "$bin" "$WORK_SECONDS" >/dev/null 2>"$TMP/run.err"
        read -r samples lost < <(perf_counts "$TMP/run.data")
      else
        "$TIME" "$TMP/outer.t" "$TMP/sample-record" $OPTS -o "$TMP/run.data" -- \
          "$TIME" "$TMP/inner.t" "$bin" "$WORK_SECONDS" >/dev/null 2>"$TMP/run.err"
        read -r samples lost < <(sample_counts "$TMP/run.err")
      fi
      cpu=$(awk 'NR == FNR { o = $2 + $3; next } { printf "%.4f", o - ($2 + $3) }' \
        "$TMP/outer.t" "$TMP/inner.t")
      echo "$wl $tool $i $samples $lost $cpu" >>"$TMP/runs.txt"
    done
  done
done

python3 - "$TMP/runs.txt" <<'EOF'
import sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    wl, tool, i, samples, lost, cpu = line.split()
    runs[(wl, tool)].append((int(i), int(samples), int(lost), float(cpu)))
print("| workload | tool | runs | runs with losses | lost in all | worst run (% of its samples) | recorder CPU s, median | per run |")
print("|---|---|---:|---:|---:|---:|---:|---|")
for (wl, tool), rs in runs.items():
    lossy = [r for r in rs if r[2] > 0]
    worst = max(rs, key=lambda r: r[2] / max(r[1], 1))
    pct = 100.0 * worst[2] / max(worst[1], 1)
    per_run = " ".join(str(r[2]) for r in sorted(rs))
    cpu = sorted(r[3] for r in rs)[len(rs) // 2]
    print(f"| {wl} | {tool} | {len(rs)} | {len(lossy)} | {sum(r[2] for r in rs):,} | "
          f"{worst[2]:,} ({pct:.3f}%) | {cpu:.3f} | {per_run} |")
# Paired: in how many pairs did each tool lose fewer?
print()
for wl in sorted({k[0] for k in runs}):
    p = {r[0]: r[2] for r in runs[(wl, "perf")]}
    s = {r[0]: r[2] for r in runs[(wl, "sample")]}
    fewer = sum(1 for i in p if s.get(i, 0) < p[i])
    more = sum(1 for i in p if s.get(i, 0) > p[i])
    print(f"{wl}: sample-record lost fewer than perf in {fewer} pairs, more in {more}, "
          f"as many in {len(p) - fewer - more}")
EOF
