#!/usr/bin/env bash
# Builds sample, records the bundled split workload (CPU time 60/30/10 across
# compute_sixty/compute_thirty/compute_ten) with call chains, prints its
# flat profile and call graph, then writes its flame graph (build/demo.svg).
set -euo pipefail

cd "$(dirname "$0")/.."

# Only what the demo runs: the two programs and the workload.
bash scripts/setup.sh record/sample-record report/sample-report tests/workloads/split

# Root is not limited by kernel.perf_event_paranoid; other users are.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
if [[ $EUID -ne 0 ]] && ((paranoid > 1)); then
  echo "note: kernel.perf_event_paranoid is $paranoid and we are not root:" \
    "recording user space only."
  if ((paranoid > 2)); then
    echo "note: at level $paranoid unprivileged profiling may be refused entirely;" \
      "'sudo sysctl kernel.perf_event_paranoid=1' allows it."
  fi
fi

echo
echo "== sample-record -g -o build/demo.data -- build/tests/workloads/split 2"
build/record/sample-record -g -o build/demo.data -- build/tests/workloads/split 2

echo
echo "== sample-report -i build/demo.data --no-children   (flat profile)"
build/report/sample-report -i build/demo.data --no-children --stdio

echo
echo "== sample-report -i build/demo.data -g --percent-limit 5   (call graph)"
build/report/sample-report -i build/demo.data -g --percent-limit 5 --stdio

echo
echo "== sample-report -i build/demo.data -o build/demo.svg   (flame graph; also .html, .pb.gz, ...)"
build/report/sample-report -i build/demo.data -o build/demo.svg
echo "wrote build/demo.svg: open it in a browser"
