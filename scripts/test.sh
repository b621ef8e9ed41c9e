#!/usr/bin/env bash
# Installs what is missing, builds, runs every test and ends with one line:
# "N passed, N failed" (", N skipped" when some were skipped).
# Exits 0 only if nothing failed.
#
#   scripts/test.sh           every test (what CI runs)
#   scripts/test.sh --quick   the inner loop: unit, golden, layout, the
#                             corpus replay and a few smoke e2e tests (the
#                             "quick" suite of tests/meson.build)
set -euo pipefail

cd "$(dirname "$0")/.."

mode=full
case "${1:-}" in
  "") ;;
  --quick) mode=quick ;;
  *)
    echo "usage: scripts/test.sh [--quick]" >&2
    exit 2
    ;;
esac

setup_rc=0
SAMPLE_SETUP_TESTS=1 bash scripts/setup.sh || setup_rc=$?
if ((setup_rc != 0)); then
  echo "test: scripts/setup.sh failed (exit $setup_rc)" >&2
fi

# Old results must not be mistaken for this run's.
rm -f build/tests/results/*.json build/meson-logs/testlog.json
mkdir -p build/tests/results

meson_rc=0
if ((setup_rc == 0)) || [[ -f build/build.ninja ]]; then
  if [[ $mode == quick ]]; then
    meson test -C build --print-errorlogs --suite quick || meson_rc=$?
  else
    # The smoke tests are e2e tests the full run has anyway.
    meson test -C build --print-errorlogs --no-suite smoke || meson_rc=$?
  fi
else
  meson_rc=1
fi

# Sums the gtest JSON each test binary writes (--gtest_output=json:PATH, see
# tests/meson.build). A binary that wrote no JSON (crash, timeout, not built)
# counts as one failure; so does a test meson saw fail whose JSON shows none.
status=0
python3 - "$setup_rc" "$meson_rc" "$mode" <<'PY' || status=$?
import json, os, subprocess, sys

setup_rc, meson_rc, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
passed = failed = skipped = 0
problems = []

def meson_tests():
    """(name, gtest json path or None) for every test this mode runs."""
    try:
        out = subprocess.run(['meson', 'introspect', '--tests', 'build'],
                             capture_output=True, text=True, check=True).stdout
        tests = json.loads(out)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return None
    result = []
    for t in tests:
        suites = {s.split(':')[-1] for s in t.get('suite', [])}
        if ('quick' not in suites) if mode == 'quick' else ('smoke' in suites):
            continue
        path = None
        for arg in t.get('cmd', [])[1:]:
            if arg.startswith('--gtest_output=json:'):
                path = arg[len('--gtest_output=json:'):]
        result.append((t.get('name', '?'), path))
    return result

def meson_results():
    """name -> meson's verdict (OK, FAIL, SKIP, TIMEOUT, ...) for this run."""
    verdicts = {}
    try:
        with open('build/meson-logs/testlog.json') as f:
            for line in f:
                line = line.strip()
                if line:
                    entry = json.loads(line)
                    # "project:suite / name" once a test has a suite
                    name = entry.get('name', '').split(' / ')[-1]
                    verdicts[name] = entry.get('result')
    except (OSError, ValueError):
        pass
    return verdicts

def count_gtest(path):
    """(passed, failed, skipped, failed test names) from one gtest JSON file."""
    with open(path) as f:
        doc = json.load(f)
    p = fl = sk = 0
    names = []
    for suite in doc.get('testsuites', []):
        for case in suite.get('testsuite', []):
            if case.get('status') == 'NOTRUN':  # DISABLED_ tests
                continue
            if case.get('failures'):
                fl += 1
                names.append(f"{suite.get('name')}.{case.get('name')}")
            elif case.get('result') == 'SKIPPED':
                sk += 1
            else:
                p += 1
    return p, fl, sk, names

if setup_rc != 0:
    failed += 1
    problems.append(f'setup/build failed (scripts/setup.sh exit {setup_rc})')

tests = meson_tests()
verdicts = meson_results()
if tests is None:
    if setup_rc == 0:
        failed += 1
        problems.append('could not list the tests (meson introspect failed)')
    tests = []

for name, path in tests:
    verdict = verdicts.get(name)
    if path is None:  # not a gtest binary: meson's verdict is the result
        if verdict in ('OK', 'EXPECTEDFAIL'):
            passed += 1
        elif verdict == 'SKIP':
            skipped += 1
        else:
            failed += 1
            problems.append(f'{name}: {verdict or "did not run"}')
        continue
    try:
        p, fl, sk, names = count_gtest(path)
    except (OSError, ValueError) as e:
        failed += 1
        problems.append(f'{name}: crashed or wrote no JSON ({path}); '
                        f'meson result: {verdict or "did not run"}')
        continue
    passed += p
    skipped += sk
    failed += fl
    problems.extend(f'{name}: {n} failed' for n in names)
    if fl == 0 and verdict not in (None, 'OK', 'SKIP', 'EXPECTEDFAIL'):
        failed += 1
        problems.append(f'{name}: all tests passed but the binary\'s result was {verdict}')

if failed == 0 and meson_rc != 0:
    failed += 1
    problems.append(f'meson test exited with status {meson_rc}')

if problems:
    print()
    print('Failures:')
    for line in problems:
        print('  ' + line)
summary = f'{passed} passed, {failed} failed'
if skipped:
    summary += f', {skipped} skipped'
sys.stdout.flush()
print(summary)
sys.exit(1 if failed else 0)
PY
exit "$status"
