/* For toggle events: work() takes 30% of the CPU time, the rest 70%, and
 * the program measures work() itself.
 *
 *   toggle single SECONDS     main calls work() (3 ms) then rest() (7 ms)
 *   toggle recursive SECONDS  work_recursive(3) nests 4 calls (4 x 2 ms),
 *                             then rest() (12 ms): 40% inside the outermost
 *   toggle threads SECONDS    thread "caller" does as single; thread
 *                             "bystander" only rest_elsewhere()
 *
 * At exit it prints on stdout "work_calls=N work_ns=T" (outermost calls,
 * and the thread CPU time they took, measured with clock_gettime
 * (CLOCK_THREAD_CPUTIME_ID) around each; the time at each end includes
 * the probes' own cost, which a toggled counter counts too). */
#include "workload.h"

#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>

static volatile uint64_t sink;
static uint64_t work_calls;
static int64_t work_ns;

NOINLINE void work(void) {
  uint64_t s = sink;
  SPIN_UNTIL(thread_cpu_ns() + 3000000, &s, 6364136223846793005ull, 1);
  sink = s;
}

NOINLINE void rest(int64_t ns) {
  uint64_t s = sink;
  SPIN_UNTIL(thread_cpu_ns() + ns, &s, 2862933555777941757ull, 3);
  sink = s;
}

NOINLINE void work_recursive(int depth) {
  uint64_t s = sink;
  SPIN_UNTIL(thread_cpu_ns() + 1000000, &s, 6364136223846793005ull, 5);
  if (depth > 0) work_recursive(depth - 1);
  SPIN_UNTIL(thread_cpu_ns() + 1000000, &s, 6364136223846793005ull, 7);
  sink = s;
}

NOINLINE void rest_elsewhere(int64_t ns) {
  uint64_t s = sink;
  SPIN_UNTIL(thread_cpu_ns() + ns, &s, 3935559000370003845ull, 9);
  sink = s;
}

static double seconds;

static void *caller(void *recursive) {
  prctl(PR_SET_NAME, "caller");
  const int64_t end = thread_cpu_ns() + (int64_t)(seconds * 1e9);
  while (thread_cpu_ns() < end) {
    const int64_t before = thread_cpu_ns();
    if (recursive) {
      work_recursive(3);
    } else {
      work();
    }
    work_ns += thread_cpu_ns() - before;
    ++work_calls;
    rest(recursive ? 12000000 : 7000000);
  }
  return NULL;
}

static void *bystander(void *unused) {
  (void)unused;
  prctl(PR_SET_NAME, "bystander");
  rest_elsewhere((int64_t)(seconds * 1e9));
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "single") != 0 && strcmp(argv[1], "recursive") != 0 &&
                    strcmp(argv[1], "threads") != 0)) {
    fprintf(stderr, "usage: %s single|recursive|threads CPU_SECONDS\n", argv[0]);
    return 2;
  }
  seconds = cpu_seconds_arg(argc - 1, argv + 1, 1.0);
  if (strcmp(argv[1], "threads") == 0) {
    pthread_t a, b;
    pthread_create(&a, NULL, caller, NULL);
    pthread_create(&b, NULL, bystander, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
  } else {
    caller(strcmp(argv[1], "recursive") == 0 ? (void *)1 : NULL);
  }
  printf("work_calls=%llu work_ns=%lld\n", (unsigned long long)work_calls, (long long)work_ns);
  return 0;
}
