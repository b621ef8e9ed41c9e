#!/usr/bin/env bash
# What a contributor waits for, timed from fresh clones of the committed
# tree (the packages installed; scripts/setup.sh finds nothing to install):
#   1. scripts/demo.sh in a clone of its own (the two programs, one workload)
#   2. scripts/test.sh in another: the build (ninja's span), then each test
#      part's time as meson measured it, and the whole command
#   3. in that clone, a rebuild after touching one libsample/ file and a
#      rerun of the unit tests
#   4. scripts/test.sh --quick there, warm
# Run by hand on a quiet machine; results go in bench/RESULTS.md ("Build
# and test time"). REV=<commit> times another commit (1, 2 and 4 only
# where that commit has them).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
rev=${REV:-HEAD}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.0f}')" "$1" "$(now)"; }

clone() {
  git clone -q "$src" "$work/$1"
  git -C "$work/$1" checkout -q "$rev"
}

echo "commit $(git -C "$src" rev-parse --short "$rev"), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"

clone demo
t=$(now)
(cd "$work/demo" && bash scripts/demo.sh >"$work/demo.log" 2>&1) || echo "demo failed: $work/demo.log"
echo "scripts/demo.sh: $(since "$t") s"

clone test
t=$(now)
(cd "$work/test" && bash scripts/test.sh >"$work/test.log" 2>&1) || true
total=$(since "$t")
python3 - "$work/test" <<'PY'
import json, sys
root = sys.argv[1]
rows = []
for line in open(root + '/build/.ninja_log'):
    if not line.startswith('#'):
        start, end, _, target, _ = line.split('\t')
        rows.append((int(start), int(end)))
print(f"build: {(max(e for _, e in rows) - min(s for s, _ in rows)) / 1000:.0f} s, {len(rows)} steps")
for line in open(root + '/build/meson-logs/testlog.json'):
    entry = json.loads(line)
    print(f"  {entry['name']:12} {entry['duration']:6.0f} s  {entry['result']}")
PY
echo "scripts/test.sh: $total s; $(tail -1 "$work/test.log")"
if ! tail -1 "$work/test.log" | grep -q ' 0 failed'; then
  # Kept past the clone's removal: which tests failed, and their output.
  keep=${TMPDIR:-/tmp}/test_time_bench-$(date +%s)
  mkdir -p "$keep"
  cp "$work/test.log" "$work/test/build/meson-logs/testlog.txt" "$keep/"
  cp -r "$work/test/build/tests/results" "$keep/"
  grep -A3 '^Failures:' "$work/test.log" || true
  echo "logs kept in $keep"
fi

cd "$work/test"
touch libsample/symbols/kallsyms.cc
t=$(now)
ninja -C build tests/unit_tests >/dev/null
build/tests/unit_tests --gtest_brief=1 >/dev/null 2>&1 || echo "unit tests failed"
echo "touch libsample/symbols/kallsyms.cc, rebuild and rerun the unit tests: $(since "$t") s"

if grep -q -- --quick scripts/test.sh; then
  t=$(now)
  bash scripts/test.sh --quick >"$work/quick.log" 2>&1 || true
  echo "scripts/test.sh --quick (warm): $(since "$t") s; $(tail -1 "$work/quick.log")"
fi
