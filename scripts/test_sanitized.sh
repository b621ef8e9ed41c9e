#!/usr/bin/env bash
# Builds the tree under AddressSanitizer and UndefinedBehaviorSanitizer in
# build-asan/ and runs the unit, golden and end-to-end suites there (the
# recorder and reporter the e2e tests run are the sanitized ones). Any
# sanitizer report fails the test that triggered it. By hand, not in CI:
# the sanitized build and run take longer than CI's budget allows (see
# docs/RELIABILITY.md for the figures). Prints the suites' summary line.
#
#   scripts/test_sanitized.sh [gtest filter]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f build-asan/build.ninja ]]; then
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
start=$(date +%s)
ninja -C build-asan
built=$(date +%s)
# halt_on_error: UBSan findings fail the test as ASan's do. detect_leaks
# stays on; LeakSanitizer cannot run under ptrace, which no test uses.
export ASAN_OPTIONS=abort_on_error=0:halt_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
filter=${1:-*}
mkdir -p build-asan/tests/results
rm -f build-asan/tests/results/sanitized-*.json
status=0
for suite in unit_tests golden_tests e2e_tests; do
  (cd build-asan/tests && "./$suite" --gtest_brief=1 --gtest_filter="$filter" \
    --gtest_output="json:results/sanitized-$suite.json") || status=1
done
done_at=$(date +%s)
python3 - build-asan/tests/results "$((built - start))" "$((done_at - built))" <<'PY'
import glob, json, sys
passed = failed = skipped = 0
for path in glob.glob(sys.argv[1] + '/sanitized-*.json'):
    for suite in json.load(open(path)).get('testsuites', []):
        for case in suite.get('testsuite', []):
            if case.get('failures'):
                failed += 1
                print(f"FAILED {suite['name']}.{case['name']}")
            elif case.get('result') == 'SKIPPED':
                skipped += 1
            else:
                passed += 1
print(f"build {sys.argv[2]} s, tests {sys.argv[3]} s")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
