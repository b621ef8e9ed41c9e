#!/usr/bin/env bash
# The e2e suite under contention, run by hand: ROUNDS runs in a row (3 by
# default) of every e2e part (the two shards and the serial suites, as
# scripts/test.sh runs them) while BUSY busy loops (2 by default, one per
# core here) compete for the CPUs. Prints each round's verdict and time and
# ends with "N of N rounds passed". Needs a built build/.
set -euo pipefail

cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
busy=${BUSY:-2}

loops=()
stop_loops() {
  ((${#loops[@]} == 0)) || kill "${loops[@]}" 2>/dev/null || true
}
trap stop_loops EXIT
for ((i = 0; i < busy; ++i)); do
  (while :; do :; done) &
  loops+=($!)
done

passed=0
for ((round = 1; round <= rounds; ++round)); do
  start=$(date +%s)
  if meson test -C build --no-rebuild --print-errorlogs e2e-1 e2e-2 e2e-serial \
      > "build/meson-logs/stress-$round.txt" 2>&1; then
    verdict=passed
    passed=$((passed + 1))
  else
    verdict="FAILED (build/meson-logs/stress-$round.txt)"
  fi
  echo "round $round: $verdict in $(($(date +%s) - start)) s with $busy busy loops"
done
echo "$passed of $rounds rounds passed"
((passed == rounds))
