/* offcpu: a thread that is off the CPU most of its time, for off-CPU and
 * wall-clock profiles.
 *
 *   offcpu sleep [ROUNDS]  the main thread alone, ROUNDS (default 100) times:
 *                          busy() spins 3 ms of wall-clock time, then
 *                          wait_sleep() sleeps 7 ms in nanosleep. Wall time
 *                          splits 30/70 by construction; busy() spins on the
 *                          wall clock so that time it loses to preemption is
 *                          still its own.
 *   offcpu lock [ROUNDS]   two threads named "contender" each take one
 *                          mutex ROUNDS times and hold it while spinning
 *                          2 ms in hold_lock(); the other waits meanwhile in
 *                          pthread_mutex_lock (a futex) under contend().
 *                          The main thread only waits for them (join).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds = 100;

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins until `ns` of wall-clock time have passed. */
NOINLINE void busy(int64_t ns) {
  const int64_t end = monotonic_ns() + ns;
  uint64_t x = sink;
  while (monotonic_ns() < end) {
    for (int i = 0; i < 1024; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink = x;
  }
}

NOINLINE void wait_sleep(int64_t ns) {
  struct timespec ts = {0, ns};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

NOINLINE void hold_lock(void) { busy(2000000); }

NOINLINE void contend(void) {
  for (int i = 0; i < rounds; ++i) {
    pthread_mutex_lock(&lock);
    hold_lock();
    pthread_mutex_unlock(&lock);
  }
}

static void *contend_thread(void *arg) {
  (void)arg;
  prctl(PR_SET_NAME, "contender", 0, 0, 0);
  contend();
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "sleep";
  if (argc > 2) rounds = atoi(argv[2]);
  if (rounds <= 0 || (strcmp(mode, "sleep") != 0 && strcmp(mode, "lock") != 0)) {
    fprintf(stderr, "usage: %s sleep|lock [ROUNDS]\n", argv[0]);
    return 2;
  }
  if (strcmp(mode, "sleep") == 0) {
    for (int i = 0; i < rounds; ++i) {
      busy(3000000);
      wait_sleep(7000000);
    }
    return 0;
  }
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) {
    if (pthread_create(&threads[t], NULL, contend_thread, NULL) != 0) return 1;
  }
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  return 0;
}
