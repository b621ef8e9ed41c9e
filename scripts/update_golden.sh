#!/usr/bin/env bash
# Rewrites tests/golden/expected/ from the current sample-report (after a
# deliberate change of output). Review `git diff tests/golden` before
# committing. New cases: add a line to tests/golden/cases.txt, then run this.
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build tests/golden_tests tests/html_tests report/sample-report >/dev/null
SAMPLE_GOLDEN_UPDATE=1 build/tests/golden_tests --gtest_brief=1 "$@" | tail -n 3
# The data --format html embeds (expected/html_data_*.json).
SAMPLE_GOLDEN_UPDATE=1 build/tests/html_tests --gtest_brief=1 --gtest_filter='HtmlDataTest.*' | tail -n 1
git status --short tests/golden/expected
