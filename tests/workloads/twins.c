/* twins: two static functions with one name, `spin`, in two files
 * (twins.c and twins_other.c), splitting the CPU 70/30: perf shows them as
 * two rows, one per symbol; a report must not merge them.
 *
 * Usage: twins [CPU_SECONDS]   (default 1.0)
 */
#include "workload.h"

static volatile uint64_t sink;

/* twins_other.c: its own static spin, called for `share_ns` of CPU. */
void other_spin_for(int64_t share_ns);

static NOINLINE void spin(int64_t share_ns) {
  SPIN_UNTIL(thread_cpu_ns() + share_ns, &sink, 6364136223846793005ull, 1442695040888963407ull);
}

int main(int argc, char **argv) {
  const int64_t end = thread_cpu_ns() + (int64_t)(cpu_seconds_arg(argc, argv, 1.0) * 1e9);
  while (thread_cpu_ns() < end) {
    spin(7000000);
    other_spin_for(3000000);
  }
  return 0;
}
