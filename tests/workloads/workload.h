/* Shared by the bundled workloads: a thread CPU clock, a spin loop that
 * stays in the calling function, and the CPU-seconds argument they all take.
 * Include it first: it sets the feature macros the system headers read. */
#ifndef SAMPLE_TESTS_WORKLOADS_WORKLOAD_H_
#define SAMPLE_TESTS_WORKLOADS_WORKLOAD_H_

#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define UNUSED __attribute__((unused))

/* CLOCK_THREAD_CPUTIME_ID is a real system call here (no vDSO), about
 * 0.5 us: reading it once per 65536 iterations (~70 us) keeps it under 1%. */
#define CHECK_EVERY 65536

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins on arithmetic into *sink_ptr until the thread CPU clock reaches
 * deadline_ns (evaluated once, before spinning). A macro, not a function,
 * so samples land in the caller. */
#define SPIN_UNTIL(deadline_ns, sink_ptr, mul, add)                       \
  do {                                                                    \
    const int64_t deadline_ = (deadline_ns);                              \
    uint64_t x_ = *(sink_ptr);                                            \
    for (;;) {                                                            \
      for (int i_ = 0; i_ < CHECK_EVERY; ++i_) x_ = x_ * (mul) + (add);   \
      *(sink_ptr) = x_;                                                   \
      if (thread_cpu_ns() >= deadline_) break;                            \
    }                                                                     \
  } while (0)

/* argv[1] as a non-negative number of CPU seconds, or `fallback` when
 * absent; prints usage and exits 2 when it is not a number. */
static UNUSED double cpu_seconds_arg(int argc, char **argv, double fallback) {
  if (argc < 2) return fallback;
  char *end = NULL;
  errno = 0;
  const double seconds = strtod(argv[1], &end);
  if (errno != 0 || end == argv[1] || *end != '\0' || !(seconds >= 0.0)) {
    fprintf(stderr, "usage: %s [CPU_SECONDS]\n", argv[0]);
    exit(2);
  }
  return seconds;
}

#endif /* SAMPLE_TESTS_WORKLOADS_WORKLOAD_H_ */
