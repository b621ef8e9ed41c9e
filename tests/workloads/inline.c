/* inline: a CPU-bound workload whose hot loop is an inlined call, for the
 * symbolizer's inline frames and source lines.
 *
 * hot_outer() spins in spin_inlined(), which is always inlined into it, so
 * nearly every sample's leaf address is inside spin_inlined's body while the
 * machine code belongs to hot_outer. Built with -O2 -g (and frame pointers).
 *
 * Usage: inline [CPU_SECONDS]   (default 1.0)
 */
#include "workload.h"

static volatile uint64_t sink;

static inline __attribute__((always_inline)) void spin_inlined(int64_t deadline_ns) {
  SPIN_UNTIL(deadline_ns, &sink, 6364136223846793005ULL, 1442695040888963407ULL); /* SPIN LINE */
}

NOINLINE void hot_outer(int64_t deadline_ns) {
  spin_inlined(deadline_ns); /* CALL LINE */
}

int main(int argc, char **argv) {
  const double seconds = cpu_seconds_arg(argc, argv, 1.0);
  hot_outer(thread_cpu_ns() + (int64_t)(seconds * 1e9));
  return 0;
}
