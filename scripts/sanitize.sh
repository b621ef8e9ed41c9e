#!/usr/bin/env bash
# The sanitizer sweep: the unit, golden and end-to-end suites built under
# AddressSanitizer and UndefinedBehaviorSanitizer (scripts/test_sanitized.sh,
# build-asan/), then every libFuzzer target for FUZZ_SECONDS each
# (scripts/fuzz_all.sh, build-fuzz/, also ASan + UBSan). By hand, not in CI:
# docs/RELIABILITY.md ("The suites under ASan and UBSan") says when it is
# run and what it took. Exits non-zero if a test failed or a fuzzer found
# anything; the last line sums both.
#
#   scripts/sanitize.sh [FUZZ_SECONDS (default 300)] [gtest filter]
set -uo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${1:-300}
filter=${2:-*}

suites_rc=0
suites=$(bash scripts/test_sanitized.sh "$filter" | tee /dev/stderr | tail -n 1) || suites_rc=$?

fuzz_log=$(mktemp)
trap 'rm -f "$fuzz_log"' EXIT
bash scripts/fuzz_all.sh "$fuzz_seconds" | tee "$fuzz_log" >&2
findings=$(awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "findings") n += $i} END {print n + 0}' \
  "$fuzz_log")
targets=$(grep -c ' executions ' "$fuzz_log" || true)

echo "sanitized suites: $suites; fuzz: $targets targets x ${fuzz_seconds} s, $findings findings"
((suites_rc == 0 && findings == 0))
