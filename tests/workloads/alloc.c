/* Allocations with a split known by construction, for --alloc.
 *
 *   alloc [ROUNDS] [threads]
 *
 * ROUNDS 0: rounds until killed (for attaching with -p).
 * Each round allocates and frees 600 bytes in alloc_sixty (malloc), 300 in
 * alloc_thirty (calloc 30 x 10) and 100 in alloc_ten (malloc 40, then
 * realloc to 60, which may move): alloc-bytes 60/30/10 by function over the
 * rounds, four allocating calls a round (two in alloc_ten).
 * Before the rounds, build_peak holds 100 blocks of 10,000 bytes at once
 * and frees them: the peak of live bytes. At the end leak_some leaks 7
 * blocks of 1,000 bytes and leak_more 3 of 2,000: 13,000 bytes in 10
 * blocks, never freed. With "threads", a second thread frees the
 * alloc_sixty blocks the first allocates (handed over one at a time).
 * Nothing else here allocates (no stdio). */
#include "workload.h"

#include <pthread.h>
#include <string.h>

static volatile uintptr_t sink;

static NOINLINE void* alloc_sixty(void) { return malloc(600); }
static NOINLINE void* alloc_thirty(void) { return calloc(30, 10); }
static NOINLINE void* alloc_ten(void) {
  char* p = malloc(40); /* realloc(NULL, 40) is malloc to gcc */
  memset(p, 1, 40);
  return realloc(p, 60);
}

static NOINLINE void build_peak(void) {
  void* blocks[100];
  for (int i = 0; i < 100; ++i) {
    blocks[i] = malloc(10000);
    memset(blocks[i], 2, 10000);
  }
  for (int i = 0; i < 100; ++i) free(blocks[i]);
}

static NOINLINE void leak_some(void) {
  for (int i = 0; i < 7; ++i) sink += (uintptr_t)malloc(1000);
}

static NOINLINE void leak_more(void) {
  for (int i = 0; i < 3; ++i) sink += (uintptr_t)malloc(2000);
}

/* The hand-over of "threads": one block at a time. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static void* handed;
static int done;

static void* freer(void* arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (handed == NULL && !done) pthread_cond_wait(&changed, &lock);
    if (handed == NULL) break;
    free(handed);
    handed = NULL;
    pthread_cond_broadcast(&changed);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

static void hand_over(void* block) {
  pthread_mutex_lock(&lock);
  while (handed != NULL) pthread_cond_wait(&changed, &lock);
  handed = block;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
}

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
  const int threads = argc > 2 && strcmp(argv[2], "threads") == 0;
  pthread_t other;
  if (threads && pthread_create(&other, NULL, freer, NULL) != 0) return 1;
  build_peak();
  for (long r = 0; rounds <= 0 || r < rounds; ++r) {
    void* a = alloc_sixty();
    if (threads) {
      hand_over(a);
    } else {
      free(a);
    }
    free(alloc_thirty());
    free(alloc_ten());
  }
  if (threads) {
    pthread_mutex_lock(&lock);
    while (handed != NULL) pthread_cond_wait(&changed, &lock);
    done = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    pthread_join(other, NULL);
  }
  leak_some();
  leak_more();
  return 0;
}
