/* threads: two threads, each CPU-bound in its own noinline call tree
 * (thread_main -> work_outer -> work_middle -> work_leaf) for N seconds of
 * its own thread CPU time (argv[1], default 1.0; decimals allowed). Built
 * with frame pointers like the other workloads, so frame-pointer call chains
 * are complete. Used by bench/record_bench.sh as the 2-thread workload.
 *
 * Usage: threads [CPU_SECONDS_PER_THREAD]
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define CHECK_EVERY 65536
#define NTHREADS 2

static volatile uint64_t sink[NTHREADS * 8]; /* one cache line per thread */

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins for about 1 ms of thread CPU time; returns the time actually spent. */
NOINLINE int64_t work_leaf(int slot) {
  int64_t start = thread_cpu_ns();
  uint64_t x = sink[slot * 8];
  int64_t elapsed = 0;
  while (elapsed < 1000000) {
    for (int i = 0; i < CHECK_EVERY; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink[slot * 8] = x;
    elapsed = thread_cpu_ns() - start;
  }
  return elapsed;
}

NOINLINE int64_t work_middle(int slot) { return work_leaf(slot); }

NOINLINE int64_t work_outer(int slot) { return work_middle(slot); }

struct job {
  int slot;
  int64_t budget_ns;
};

NOINLINE void *thread_main(void *arg) {
  const struct job *job = arg;
  int64_t spent = 0;
  while (spent < job->budget_ns) spent += work_outer(job->slot);
  return NULL;
}

int main(int argc, char **argv) {
  double seconds = 1.0;
  if (argc > 1) {
    char *end = NULL;
    errno = 0;
    seconds = strtod(argv[1], &end);
    if (errno != 0 || end == argv[1] || *end != '\0' || !(seconds >= 0.0)) {
      fprintf(stderr, "usage: %s [CPU_SECONDS_PER_THREAD]\n", argv[0]);
      return 2;
    }
  }
  struct job jobs[NTHREADS];
  pthread_t tids[NTHREADS];
  for (int t = 0; t < NTHREADS; ++t) {
    jobs[t].slot = t;
    jobs[t].budget_ns = (int64_t)(seconds * 1e9);
    int err = pthread_create(&tids[t], NULL, thread_main, &jobs[t]);
    if (err != 0) {
      fprintf(stderr, "threads: pthread_create failed (%d)\n", err);
      return 1;
    }
  }
  for (int t = 0; t < NTHREADS; ++t) pthread_join(tids[t], NULL);
  return 0;
}
