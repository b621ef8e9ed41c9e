/* vdso_clock: calls clock_gettime(CLOCK_MONOTONIC) in a tight loop for N
 * seconds of thread CPU time (argv[1], default 0.3). With a TSC-like
 * clocksource the call never enters the kernel: nearly all samples land in
 * the vDSO's __vdso_clock_gettime (its helpers are inlined into it) or in
 * libc's clock_gettime wrapper, which is what the [vdso] symbolization tests
 * look for. The loop's own share is small: one call per iteration. (With
 * a clocksource the vDSO cannot read, e.g. hpet, the calls become system
 * calls and the samples land in the kernel.)
 */
#include "workload.h"

static volatile uint64_t sink;

NOINLINE void read_clock_loop(int64_t budget_ns) {
  const int64_t deadline = thread_cpu_ns() + budget_ns;
  uint64_t sum = 0;
  for (;;) {
    /* CLOCK_THREAD_CPUTIME_ID is a system call: check it rarely. */
    for (int i = 0; i < 4096; ++i) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      sum += (uint64_t)ts.tv_nsec;
    }
    sink = sum;
    if (thread_cpu_ns() >= deadline) break;
  }
}

int main(int argc, char **argv) {
  const double seconds = cpu_seconds_arg(argc, argv, 0.3);
  read_clock_loop((int64_t)(seconds * 1e9));
  return 0;
}
