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
 * Usage: leaf [CPU_SECONDS] [split]   (default 0.3; decimals allowed)
 *
 * With "split", main calls parent_seventy and parent_thirty in turn
 * instead, which call leaf_fn 7 and 3 times a round: their CPU time (in the
 * children view: they are the callers that frame-pointer chains skip)
 * splits 70/30 by construction.
 */
#include "workload.h"

#include <string.h>

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

/* The empty asm after the loop keeps gcc from making the last call a tail
 * call (a jump), whose leaf would return to main directly. */
TESTED uint64_t parent_seventy(uint64_t x) {
  for (int i = 0; i < 7; ++i) x = leaf_fn(x);
  __asm__ volatile("" : "+r"(x));
  return x;
}

TESTED uint64_t parent_thirty(uint64_t x) {
  for (int i = 0; i < 3; ++i) x = leaf_fn(x);
  __asm__ volatile("" : "+r"(x));
  return x;
}

int main(int argc, char** argv) {
  const double seconds = cpu_seconds_arg(argc > 2 ? 2 : argc, argv, 0.3);
  const int64_t deadline = thread_cpu_ns() + (int64_t)(seconds * 1e9);
  if (argc > 2 && strcmp(argv[2], "split") == 0) {
    uint64_t x = sink;
    while (thread_cpu_ns() < deadline) x = parent_thirty(parent_seventy(x));
    sink = x;
    return 0;
  }
  sink = parent_fn(deadline);
  return 0;
}
