/* threads: two threads, each CPU-bound in its own noinline call tree
 * (thread_main -> work_outer -> work_middle -> work_leaf) for N seconds of
 * its own thread CPU time (argv[1], default 1.0; decimals allowed). Built
 * with frame pointers like the other workloads, so frame-pointer call chains
 * are complete. Used by bench/record_bench.sh as the 2-thread workload.
 *
 * The threads stop on CPU time, not on work done, so a profiler whose
 * sampling cost is charged to the threads' CPU clocks shows up as less work,
 * not as more wall time. With THREADS_PRINT_WORK set in the environment the
 * program prints "threads-work: N" on stderr (N = inner-loop blocks done by
 * both threads), from which time per unit of work can be computed.
 *
 * THREADS_COUNT=N in the environment runs N such threads (1-8; default 2),
 * for more busy threads than CPUs (bench/loss_bench.sh).
 *
 * Usage: threads [CPU_SECONDS_PER_THREAD]
 */
#include "workload.h"

#include <pthread.h>

#define NTHREADS 8 /* at most */

static volatile uint64_t sink[NTHREADS * 8]; /* one cache line per thread */
static uint64_t blocks[NTHREADS * 8];        /* CHECK_EVERY-iteration blocks done */

/* Spins for about 1 ms of thread CPU time; returns the time actually spent. */
NOINLINE int64_t work_leaf(int slot) {
  int64_t start = thread_cpu_ns();
  uint64_t x = sink[slot * 8];
  int64_t elapsed = 0;
  while (elapsed < 1000000) {
    for (int i = 0; i < CHECK_EVERY; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink[slot * 8] = x;
    ++blocks[slot * 8];
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
  const double seconds = cpu_seconds_arg(argc, argv, 1.0);
  const char *count_env = getenv("THREADS_COUNT");
  const int count = count_env != NULL ? atoi(count_env) : 2;
  if (count < 1 || count > NTHREADS) {
    fprintf(stderr, "threads: THREADS_COUNT must be 1-%d\n", NTHREADS);
    return 2;
  }
  struct job jobs[NTHREADS];
  pthread_t tids[NTHREADS];
  for (int t = 0; t < count; ++t) {
    jobs[t].slot = t;
    jobs[t].budget_ns = (int64_t)(seconds * 1e9);
    int err = pthread_create(&tids[t], NULL, thread_main, &jobs[t]);
    if (err != 0) {
      fprintf(stderr, "threads: pthread_create failed (%d)\n", err);
      return 1;
    }
  }
  uint64_t total = 0;
  for (int t = 0; t < count; ++t) {
    pthread_join(tids[t], NULL);
    total += blocks[t * 8];
  }
  if (getenv("THREADS_PRINT_WORK") != NULL) {
    fprintf(stderr, "threads-work: %llu\n", (unsigned long long)total);
  }
  return 0;
}
