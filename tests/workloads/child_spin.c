/* child-alpha / child-beta: spin CPU-bound in child_work for N seconds of
 * thread CPU time (argv[1], default 0.3). Built twice under two names so a
 * profile of forkexec shows two distinct commands.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define CHECK_EVERY 65536

static volatile uint64_t sink;

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

NOINLINE void child_work(int64_t budget_ns) {
  int64_t deadline = thread_cpu_ns() + budget_ns;
  uint64_t x = sink;
  for (;;) {
    for (int i = 0; i < CHECK_EVERY; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink = x;
    if (thread_cpu_ns() >= deadline) break;
  }
}

int main(int argc, char **argv) {
  double seconds = 0.3;
  if (argc > 1) {
    char *end = NULL;
    errno = 0;
    seconds = strtod(argv[1], &end);
    if (errno != 0 || end == argv[1] || *end != '\0' || !(seconds >= 0.0)) {
      fprintf(stderr, "usage: %s [CPU_SECONDS]\n", argv[0]);
      return 2;
    }
  }
  child_work((int64_t)(seconds * 1e9));
  return 0;
}
