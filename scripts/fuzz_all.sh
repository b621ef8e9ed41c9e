#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each (default 1800), JOBS at a
# time (default 2), starting from its checked-in corpus; new inputs go to
# build-fuzz/corpus/NAME, crashes to build-fuzz/findings/NAME. Prints one
# line per target: executions, new corpus files, findings. By hand, never
# in CI (it takes SECONDS x targets / JOBS).
#
#   scripts/fuzz_all.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
shift || true
jobs=${JOBS:-2}
if [[ ! -f build-fuzz/build.ninja ]]; then
  CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=true >/dev/null
fi
ninja -C build-fuzz >/dev/null
targets=("$@")
if ((${#targets[@]} == 0)); then
  for dir in tests/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

run_one() {
  local name=$1
  local corpus=build-fuzz/corpus/$name findings=build-fuzz/findings/$name
  mkdir -p "$corpus" "$findings"
  local before
  before=$(find "$corpus" -type f | wc -l)
  # -rss_limit_mb: the reporter's own memory bound is part of what is tested.
  (cd "$findings" && "../../tests/fuzz/fuzz_$name" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    "../../corpus/$name" "../../../tests/fuzz/corpus/$name" >../"$name.log" 2>&1) || true
  local execs after crashes
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/findings/$name.log" |
    grep -o '[0-9]*$' || echo '?')
  after=$(find "$corpus" -type f | wc -l)
  crashes=$(find "$findings" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  printf '%-14s %6ss  %12s executions  %5d new corpus files  %d findings\n' \
    "$name" "$seconds" "$execs" $((after - before)) "$crashes"
}

running=0
for name in "${targets[@]}"; do
  run_one "$name" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
done
wait
