#!/bin/bash
# -d (data addresses) against perf record -d: the bundled faults workload
# (tests/workloads/faults.c, ROUNDS_OF_WORK rounds of 5000 page faults in
# anonymous memory and a mapped file) recorded with every page fault and
# its data address (-e page-faults -c 1 -d) by perf (with -z, its smallest
# file) and by sample-record; then the report by data object and function
# (perf report --mem-mode --sort dso_daddr,sym, sample-report --sort
# dso_daddr,sym) of each tool's own file, and sample-report's of perf's
# file. Each figure is the median of ROUNDS rounds: the file's bytes, the
# wall time of the recorded command, the report's wall time and peak RSS
# (/usr/bin/time). Not run by CI.
#
#   bench/data_bench.sh                      # 5 rounds of 60 rounds of work
#   ROUNDS=7 ROUNDS_OF_WORK=100 bench/data_bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$root/build}
PERF=${PERF:-perf}
rounds=${ROUNDS:-5}
work_rounds=${ROUNDS_OF_WORK:-60}
record="$BUILD/record/sample-record"
report="$BUILD/report/sample-report"
faults="$BUILD/tests/workloads/faults"
source "$root/bench/common.sh"
SREC_BUILT=$record
require_tools data_bench "$record" "$report" "$faults"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# timed NAME COMMAND...: "wall_s max_rss_kb" appended to $work/NAME.
timed() {
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  cat "$work/time" >>"$work/$name"
}

machine_info
echo "data addresses: ${rounds} rounds, faults with $work_rounds rounds of work"
for round in $(seq "$rounds"); do
  timed rec-perf "$PERF" record -q -z -e page-faults -c 1 -d -o "$work/perf.data" -- \
    "$faults" "$work/mapped" "$work_rounds"
  timed rec-sample "$record" -q -e page-faults -c 1 -d -o "$work/sample.data" -- \
    "$faults" "$work/mapped" "$work_rounds"
  stat -c %s "$work/perf.data" >>"$work/bytes-perf"
  stat -c %s "$work/sample.data" >>"$work/bytes-sample"
  timed rep-perf "$PERF" report -i "$work/perf.data" --stdio --mem-mode --sort dso_daddr,sym
  timed rep-sample "$report" -i "$work/sample.data" --stdio --sort dso_daddr,sym
  timed rep-sample-on-perf "$report" -i "$work/perf.data" --stdio --sort dso_daddr,sym
  echo "  round $round done"
done
ours=$("$report" -i "$work/sample.data" --stats |
  awk '/SAMPLE events:/ { s = $3 } /lost samples:/ { l = $3 } END { print s, l }')
echo "samples lost: perf $(perf_counts "$work/perf.data"), sample-record $ours"
python3 - "$work" <<'PY'
import statistics, sys
work = sys.argv[1]
def col(name, i):
    return [float(line.split()[i]) for line in open(f"{work}/{name}")]
def med(values):
    return statistics.median(values)
bytes_perf = [float(l) for l in open(f"{work}/bytes-perf")]
bytes_sample = [float(l) for l in open(f"{work}/bytes-sample")]
print(f"{'what':<44} {'perf':>10} {'sample':>10} {'ratio':>7}")
print(f"{'file bytes (perf -z)':<44} {med(bytes_perf):>10.0f} {med(bytes_sample):>10.0f} "
      f"{med(s / p for s, p in zip(bytes_sample, bytes_perf)):>6.2f}x")
rp, rs = col("rec-perf", 0), col("rec-sample", 0)
print(f"{'recorded command, wall s':<44} {med(rp):>10.2f} {med(rs):>10.2f} "
      f"{med(s / p for s, p in zip(rs, rp)):>6.2f}x")
pp, ps, po = col("rep-perf", 0), col("rep-sample", 0), col("rep-sample-on-perf", 0)
print(f"{'report --sort dso_daddr,sym, wall s':<44} {med(pp):>10.2f} {med(ps):>10.2f} "
      f"{med(s / p for s, p in zip(ps, pp)):>6.2f}x")
print(f"{'  sample-report of perf.data, wall s':<44} {med(pp):>10.2f} {med(po):>10.2f} "
      f"{med(s / p for s, p in zip(po, pp)):>6.2f}x")
mp, ms = col("rep-perf", 1), col("rep-sample", 1)
print(f"{'report peak RSS, MB':<44} {med(mp) / 1024:>10.1f} {med(ms) / 1024:>10.1f} "
      f"{med(s / p for s, p in zip(ms, mp)):>6.2f}x")
PY
