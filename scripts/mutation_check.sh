#!/usr/bin/env bash
# The mutation check of the test suite, run by hand (about an hour on two
# cores): each patch in tests/mutants/ breaks one behaviour the suite
# guards (tests/mutants/README.md says which and where). For each, in a
# scratch clone of the committed tree: apply it, rebuild, run the full
# suite as scripts/test.sh does, and list the tests that failed. A mutant
# no test catches is a hole in the suite. Ends with "N of N mutants caught".
#
#   scripts/mutation_check.sh            every patch
#   scripts/mutation_check.sh 03 07      the patches whose names start so
set -euo pipefail

cd "$(dirname "$0")/.."
src=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$src" "$work/tree"
cd "$work/tree"
meson setup build >/dev/null
ninja -C build >/dev/null

patches=()
for patch in "$src"/tests/mutants/*.patch; do
  name=$(basename "$patch" .patch)
  if (($# == 0)); then
    patches+=("$patch")
  else
    for prefix in "$@"; do
      [[ $name == "$prefix"* ]] && patches+=("$patch")
    done
  fi
done

caught=0
for patch in "${patches[@]}"; do
  name=$(basename "$patch" .patch)
  if ! git apply "$patch"; then
    echo "$name: does not apply to this tree (the code moved; refresh the patch)"
    continue
  fi
  if ! ninja -C build >"$work/build.log" 2>&1; then
    echo "$name: does not compile (see the patch)"
    git checkout -q -- .
    continue
  fi
  rm -f build/tests/results/*.json build/meson-logs/testlog.json
  start=$(date +%s)
  meson test -C build --no-rebuild --no-suite smoke >/dev/null 2>&1 || true
  seconds=$(($(date +%s) - start))
  failed=$(python3 - <<'PY'
import glob, json
names = []
for path in sorted(glob.glob('build/tests/results/*.json')):
    for suite in json.load(open(path)).get('testsuites', []):
        for case in suite.get('testsuite', []):
            if case.get('failures'):
                names.append(f"{suite['name']}.{case['name']}")
try:
    for line in open('build/meson-logs/testlog.json'):
        entry = json.loads(line)
        if not any('--gtest_output' in a for a in entry.get('command', [])) and \
                entry.get('result') not in ('OK', 'SKIP', 'EXPECTEDFAIL'):
            names.append(entry.get('name', '?'))
except OSError:
    pass
print(' '.join(names))
PY
)
  if [[ -n $failed ]]; then
    caught=$((caught + 1))
    echo "$name: caught ($seconds s) by $(wc -w <<<"$failed") tests: $failed"
  else
    echo "$name: SURVIVED: every test passed ($seconds s)"
  fi
  git checkout -q -- .
done
echo "$caught of ${#patches[@]} mutants caught"
