/* unwind: call stacks for testing DWARF (CFI) unwinding, in four modes.
 *
 * Built twice from this file: `unwind-nofp` without frame pointers (so only
 * the CFI in .eh_frame describes the frames) and `unwind-fp` with them (so
 * frame-pointer and DWARF call chains can be compared). Every function named
 * below is noinline and noclone, so each is a frame of its own under its own
 * name, and the leaves differ in their constants so identical-code folding
 * cannot merge them.
 *
 *   unwind chain [S]     main -> level_one -> level_two -> level_three ->
 *                        hot_leaf. The levels keep values in callee-saved
 *                        registers across their calls and have locals of
 *                        different sizes, so a correct unwind must restore
 *                        registers and CFAs from the CFI.
 *   unwind qsort [S]     main -> sort_many -> qsort (libc) -> ... ->
 *                        compare_items: most of the time is in a callback
 *                        called from inside libc, whose frames have no frame
 *                        pointers.
 *   unwind threads [S]   two threads, start_thread -> thread_a_work ->
 *                        a_leaf and start_thread -> thread_b_work -> b_leaf,
 *                        S CPU seconds each.
 *   unwind signal [S]    main -> signal_wait -> sigsuspend (libc) -> the
 *                        kernel's signal frame (libc's __restore_rt) ->
 *                        on_alarm -> alarm_leaf: a SIGALRM every 2 ms of
 *                        real time, its handler spinning about 1 ms of
 *                        CPU, so most samples unwind through the frame.
 *   unwind deep N [S]    main -> deep_start -> deep_recurse x N -> deep_leaf,
 *                        each deep_recurse frame holding a 256-byte array, so
 *                        at N = 64 the stack is deeper than an 8 KiB copy.
 *
 * Each mode stops after S CPU seconds of its own thread clock (default 0.3;
 * decimals allowed), so the work is deterministic in time, not in speed.
 * Leaves spin on arithmetic for a fixed number of iterations and return;
 * their callers read the clock between calls, so the leaves themselves make
 * no calls.
 */
#include "workload.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#define TESTED __attribute__((noinline, noclone))

/* Iterations per leaf call: ~70 us at ~1 ns each, so reading the clock
 * between calls costs under 1%. */
#define LEAF_ITERATIONS CHECK_EVERY

/* Passes x through a stack slot. gcc 12 drops the frame set-up (push %rbp;
 * mov %rsp,%rbp) of any leaf function that needs no stack frame, at -O1 and
 * above, -fno-omit-frame-pointer and -mno-omit-leaf-frame-pointer
 * notwithstanding; one slot on the stack keeps it, so the frame-pointer
 * build has complete frame-pointer chains. (Without frame pointers the slot
 * is in the red zone and changes nothing.) */
#define THROUGH_STACK(x)           \
  do {                             \
    volatile uint64_t slot_ = (x); \
    (x) = slot_;                   \
  } while (0)

static volatile uint64_t sink;

static void usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s chain|qsort|threads|signal [CPU_SECONDS]\n       %s deep N [CPU_SECONDS]\n",
          argv0, argv0);
  exit(2);
}

/* A non-negative number of CPU seconds from `text`, or exits with usage. */
static double parse_seconds(const char* argv0, const char* text) {
  char* end = NULL;
  errno = 0;
  const double seconds = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(seconds >= 0.0)) usage(argv0);
  return seconds;
}

static int64_t deadline_after(double seconds) { return thread_cpu_ns() + (int64_t)(seconds * 1e9); }

/* --- chain ------------------------------------------------------------ */

TESTED uint64_t hot_leaf(uint64_t x) {
  THROUGH_STACK(x);
  for (int i = 0; i < LEAF_ITERATIONS; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

/* Values live across the calls below end up in callee-saved registers
 * (pushed in the prologue, described by the CFI); the arrays move the CFA
 * away from the pushes by different amounts in each level. */
TESTED uint64_t level_three(uint64_t a, uint64_t b, int64_t deadline) {
  volatile uint64_t scratch[3] = {a, b, a ^ b};
  uint64_t x = a + 3, y = b * 5, z = a ^ (b << 3), w = 7;
  while (thread_cpu_ns() < deadline) {
    x = hot_leaf(x + y);
    y += z ^ x;
    z = z * 3 + w;
    w ^= x >> 7;
  }
  return x + y + z + w + scratch[0] + scratch[2];
}

TESTED uint64_t level_two(uint64_t a, int64_t deadline) {
  volatile uint64_t scratch[9] = {a, a + 1, a + 2};
  uint64_t p = a * 11, q = a ^ 0x5555, r = a + 77, s = a << 2;
  const uint64_t out = level_three(p + q, r ^ s, deadline);
  return out + p * q + r * s + scratch[0] + scratch[8];
}

TESTED uint64_t level_one(int64_t deadline) {
  volatile uint64_t scratch[21] = {1, 2, 3};
  uint64_t m = sink + 13, n = sink ^ 0xabcdef, o = sink * 17, k = 99;
  const uint64_t out = level_two(m + n + o, deadline);
  return out ^ (m * n + o * k + scratch[1] + scratch[20]);
}

/* --- qsort ------------------------------------------------------------ */

#define ITEMS 512

struct item {
  uint64_t key;
  uint64_t payload;
};

/* Compares the items' keys after a few rounds of mixing, so the time goes
 * to the callback rather than to libc's sorting. */
TESTED int compare_items(const void* left, const void* right) {
  uint64_t a = ((const struct item*)left)->key, b = ((const struct item*)right)->key;
  THROUGH_STACK(a);
  for (int i = 0; i < 64; ++i) {
    a = a * 2862933555777941757ULL + 3037000493ULL;
    b = b * 2862933555777941757ULL + 3037000493ULL;
  }
  return (a > b) - (a < b);
}

TESTED uint64_t sort_many(int64_t deadline) {
  static struct item items[ITEMS];
  uint64_t seed = 88172645463325252ULL, check = 0;
  while (thread_cpu_ns() < deadline) {
    for (int i = 0; i < ITEMS; ++i) {
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      items[i].key = seed;
      items[i].payload = (uint64_t)i;
    }
    qsort(items, ITEMS, sizeof(items[0]), compare_items);
    check += items[0].payload;
  }
  return check;
}

/* --- threads ---------------------------------------------------------- */

TESTED uint64_t a_leaf(uint64_t x) {
  THROUGH_STACK(x);
  for (int i = 0; i < LEAF_ITERATIONS; ++i) x = x * 3935559000370003845ULL + 2691343689449507681ULL;
  return x;
}

TESTED uint64_t b_leaf(uint64_t x) {
  THROUGH_STACK(x);
  for (int i = 0; i < LEAF_ITERATIONS; ++i) x = x * 2862933555777941757ULL + 7046029254386353087ULL;
  return x;
}

TESTED void* thread_a_work(void* arg) {
  const int64_t deadline = deadline_after(*(const double*)arg);
  uint64_t x = 1;
  while (thread_cpu_ns() < deadline) x = a_leaf(x);
  sink = x;
  return NULL;
}

TESTED void* thread_b_work(void* arg) {
  const int64_t deadline = deadline_after(*(const double*)arg);
  uint64_t x = 2;
  while (thread_cpu_ns() < deadline) x = b_leaf(x);
  sink = x;
  return NULL;
}

static int run_threads(double seconds) {
  pthread_t a, b;
  if (pthread_create(&a, NULL, thread_a_work, &seconds) != 0 ||
      pthread_create(&b, NULL, thread_b_work, &seconds) != 0) {
    fprintf(stderr, "unwind: pthread_create failed\n");
    return 1;
  }
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}

/* --- deep ------------------------------------------------------------- */

#define DEEP_FRAME_BYTES 256

TESTED uint64_t deep_leaf(int64_t deadline) {
  uint64_t x = sink;
  SPIN_UNTIL(deadline, &x, 6364136223846793005ULL, 1442695040888963407ULL);
  return x;
}

/* Each frame fills its array and reads it back after the call, so the array
 * stays on the stack and the call is not a tail call. */
TESTED uint64_t deep_recurse(int depth, int64_t deadline) {
  unsigned char frame[DEEP_FRAME_BYTES];
  memset(frame, depth & 0xff, sizeof(frame));
  __asm__ volatile("" : : "r"(frame) : "memory");
  const uint64_t below = depth <= 1 ? deep_leaf(deadline) : deep_recurse(depth - 1, deadline);
  return below + frame[depth % DEEP_FRAME_BYTES];
}

TESTED uint64_t deep_start(int depth, int64_t deadline) {
  return deep_recurse(depth, deadline) + 1;
}

/* --- signal ----------------------------------------------------------- */

TESTED uint64_t alarm_leaf(uint64_t x) {
  THROUGH_STACK(x);
  for (int i = 0; i < LEAF_ITERATIONS; ++i) x = x * 2862933555777941757ULL + 3037000493ULL;
  return x;
}

TESTED void on_alarm(int signo) {
  (void)signo;
  const int64_t until = thread_cpu_ns() + 1000000;
  uint64_t x = sink;
  while (thread_cpu_ns() < until) x = alarm_leaf(x);
  sink = x;
}

TESTED uint64_t signal_wait(int64_t deadline) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = on_alarm;
  sigaction(SIGALRM, &action, NULL);
  const struct itimerval every = {{0, 2000}, {0, 2000}};
  setitimer(ITIMER_REAL, &every, NULL);
  sigset_t none;
  sigemptyset(&none);
  while (thread_cpu_ns() < deadline) sigsuspend(&none);
  const struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  return sink;
}

int main(int argc, char** argv) {
  if (argc < 2) usage(argv[0]);
  const char* mode = argv[1];
  if (strcmp(mode, "deep") == 0) {
    if (argc < 3 || argc > 4) usage(argv[0]);
    char* end = NULL;
    const long depth = strtol(argv[2], &end, 10);
    if (end == argv[2] || *end != '\0' || depth < 1 || depth > 100000) usage(argv[0]);
    const double seconds = argc == 4 ? parse_seconds(argv[0], argv[3]) : 0.3;
    sink = deep_start((int)depth, deadline_after(seconds));
    return 0;
  }
  if (argc > 3) usage(argv[0]);
  const double seconds = argc == 3 ? parse_seconds(argv[0], argv[2]) : 0.3;
  if (strcmp(mode, "chain") == 0) {
    sink = level_one(deadline_after(seconds));
  } else if (strcmp(mode, "qsort") == 0) {
    sink = sort_many(deadline_after(seconds));
  } else if (strcmp(mode, "threads") == 0) {
    return run_threads(seconds);
  } else if (strcmp(mode, "signal") == 0) {
    sink = signal_wait(deadline_after(seconds));
  } else {
    usage(argv[0]);
  }
  return 0;
}
