/* shared_inline: three functions that share one inlined helper, for rows
 * by function symbol (as perf's) with the helper as an inline frame.
 *
 * spin() is always inlined into func_a(), func_b() and func_c(), which
 * main() calls for 50%, 30% and 20% of the CPU time by construction, in
 * rounds of 10 ms so that a short recording sees the split. Nearly every
 * sample's leaf address is inside spin's body while the machine code
 * belongs to one of the three. Built with -O2 -g and frame pointers.
 *
 * Usage: shared_inline [CPU_SECONDS]   (default 1.0)
 */
#include "workload.h"

static volatile uint64_t sink;

static inline __attribute__((always_inline)) void spin(int64_t ns, uint64_t mul) {
  SPIN_UNTIL(thread_cpu_ns() + ns, &sink, mul, 1442695040888963407ULL); /* SPIN LINE */
}

NOINLINE void func_a(int64_t ns) { spin(ns, 6364136223846793005ULL); }
NOINLINE void func_b(int64_t ns) { spin(ns, 2862933555777941757ULL); }
NOINLINE void func_c(int64_t ns) { spin(ns, 3202034522624059733ULL); }

int main(int argc, char **argv) {
  const double seconds = cpu_seconds_arg(argc, argv, 1.0);
  const int64_t round_ns = 10000000;
  const int64_t rounds = (int64_t)(seconds * 1e9) / round_ns;
  for (int64_t r = 0; r < (rounds > 0 ? rounds : 1); ++r) {
    func_a(round_ns * 5 / 10);
    func_b(round_ns * 3 / 10);
    func_c(round_ns * 2 / 10);
  }
  return 0;
}
