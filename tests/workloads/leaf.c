/* leaf: main -> parent_fn -> leaf_fn, where leaf_fn spins and calls
 * nothing, for the frame-pointer "leaf" problem.
 *
 * Built with -O2 -fno-omit-frame-pointer but without
 * -mno-omit-leaf-frame-pointer: gcc then gives leaf_fn no frame set-up (no
 * push %rbp; mov %rsp,%rbp). A sample taken in leaf_fn finds %rbp still
 * pointing at parent_fn's frame, whose saved return address is in main, so a
 * frame-pointer call chain reads leaf_fn, main, ... and skips parent_fn.
 * The return address into parent_fn is the word at the sample's stack
 * pointer, which --call-graph fp,leaf records.
 *
 * Usage: leaf [CPU_SECONDS]   (default 0.3; decimals allowed)
 */
#include "workload.h"

#define TESTED __attribute__((noinline, noclone))

static volatile uint64_t sink;

/* ~70 us of arithmetic per call; no calls, no stack. */
TESTED uint64_t leaf_fn(uint64_t x) {
  for (int i = 0; i < CHECK_EVERY; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

TESTED uint64_t parent_fn(int64_t deadline) {
  uint64_t x = sink;
  while (thread_cpu_ns() < deadline) x = leaf_fn(x);
  return x;
}

int main(int argc, char** argv) {
  const double seconds = cpu_seconds_arg(argc, argv, 0.3);
  sink = parent_fn(thread_cpu_ns() + (int64_t)(seconds * 1e9));
  return 0;
}
