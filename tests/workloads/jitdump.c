/* jitdump: a fake JIT that writes a jitdump, as node --perf-prof and the
 * JVM's perf agents do. It copies two x86-64 functions (countdown loops that
 * keep a frame pointer) into anonymous executable memory, writes
 * DIR/jit-PID.dump with a code load and a debug-info record for each, maps
 * the dump executable (the MMAP2 record is how a profiler finds it), and
 * runs them with a 70/30 split of the work by construction: per round,
 * jit_seventy counts down 700,000 and jit_thirty 300,000 with the same loop.
 * Halfway through it moves jit_seventy to new memory (a JIT_CODE_MOVE) and
 * runs it there. Prints the dump's path on stdout. x86-64 only.
 *
 * Usage: jitdump [CPU_SECONDS] [DIR] [map]   (default 1.0, .)
 * With "map" it also writes /tmp/perf-PID.map naming the same code
 * "perfmap_seventy" and "perfmap_thirty" (the jitdump's names must win).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "workload.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)

enum { kCodeLoad = 0, kCodeMove = 1, kDebugInfo = 2, kClose = 3 };

static int dump_fd = -1;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* the clock the recorder's events use */
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Appends bytes to a record being built. */
struct buf {
  unsigned char data[512];
  size_t size;
};

static void put(struct buf *b, const void *p, size_t n) {
  memcpy(b->data + b->size, p, n);
  b->size += n;
}

static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }

/* Writes one record: id, total size, time, then the body (padded to 8). */
static void emit(uint32_t id, const struct buf *body) {
  struct buf r = {{0}, 0};
  const size_t padded = (body->size + 7) & ~(size_t)7;
  put32(&r, id);
  put32(&r, (uint32_t)(16 + padded));
  put64(&r, now_ns());
  put(&r, body->data, body->size);
  r.size = 16 + padded;
  if (write(dump_fd, r.data, r.size) != (ssize_t)r.size) {
    perror("write");
    exit(1);
  }
}

static void emit_load(const void *code, size_t size, const char *name, uint64_t index) {
  struct buf b = {{0}, 0};
  put32(&b, (uint32_t)getpid());
  put32(&b, (uint32_t)getpid());
  put64(&b, (uint64_t)(uintptr_t)code);
  put64(&b, (uint64_t)(uintptr_t)code);
  put64(&b, size);
  put64(&b, index);
  put(&b, name, strlen(name) + 1);
  put(&b, code, size);
  emit(kCodeLoad, &b);
}

/* Two lines: the frame set-up, then the loop. */
static void emit_lines(const void *code, const char *file, uint32_t line) {
  struct buf b = {{0}, 0};
  const uint64_t address = (uint64_t)(uintptr_t)code;
  put64(&b, address);
  put64(&b, 2);
  put64(&b, address);
  put32(&b, line);
  put32(&b, 0);
  put(&b, file, strlen(file) + 1);
  put64(&b, address + 4);
  put32(&b, line + 1);
  put32(&b, 0);
  put(&b, "\xff", 2); /* the previous entry's file */
  emit(kDebugInfo, &b);
}

static void emit_move(const void *from, const void *to, size_t size, uint64_t index) {
  struct buf b = {{0}, 0};
  put32(&b, (uint32_t)getpid());
  put32(&b, (uint32_t)getpid());
  put64(&b, (uint64_t)(uintptr_t)to);
  put64(&b, (uint64_t)(uintptr_t)from);
  put64(&b, (uint64_t)(uintptr_t)to);
  put64(&b, size);
  put64(&b, index);
  emit(kCodeMove, &b);
}

static void *code_page(void) {
  void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  if (mem == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  return mem;
}

#endif

int main(int argc, char **argv) {
  const double seconds = cpu_seconds_arg(argc > 2 ? 2 : argc, argv, 1.0);
#if defined(__x86_64__)
  const char *dir = argc > 2 ? argv[2] : ".";
  const int with_map = argc > 3 && strcmp(argv[3], "map") == 0;
  /* countdown(n): push %rbp; mov %rsp,%rbp; 1: dec %rdi; jnz 1b; pop %rbp; ret.
   * The two copies differ only in a trailing nop, so they are not one code. */
  static const unsigned char seventy[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf,
                                          0x75, 0xfb, 0x5d, 0xc3, 0x90};
  static const unsigned char thirty[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xff,
                                         0xcf, 0x75, 0xfb, 0x5d, 0xc3};
  char path[4096];
  snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
  dump_fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (dump_fd < 0) {
    perror(path);
    return 1;
  }
  /* The header: magic, version, size, EM_X86_64, pad, pid, time, flags. */
  struct buf h = {{0}, 0};
  put32(&h, 0x4A695444);
  put32(&h, 1);
  put32(&h, 40);
  put32(&h, 62);
  put32(&h, 0);
  put32(&h, (uint32_t)getpid());
  put64(&h, now_ns());
  put64(&h, 0);
  if (write(dump_fd, h.data, h.size) != (ssize_t)h.size) {
    perror("write");
    return 1;
  }
  /* Mapped executable so that the kernel reports it (as perf's agents do). */
  if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, dump_fd, 0) == MAP_FAILED) {
    perror("mmap of the dump");
    return 1;
  }
  unsigned char *first = code_page();
  memcpy(first, seventy, sizeof(seventy));
  memcpy(first + 64, thirty, sizeof(thirty));
  emit_lines(first, "/src/jit_seventy.js", 7);
  emit_load(first, sizeof(seventy), "jit_seventy", 1);
  emit_lines(first + 64, "/src/jit_thirty.js", 3);
  emit_load(first + 64, sizeof(thirty), "jit_thirty", 2);
  if (with_map) {
    char map_path[64];
    snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
    FILE *map = fopen(map_path, "w");
    if (map == NULL) {
      perror(map_path);
      return 1;
    }
    fprintf(map, "%lx %zx perfmap_seventy\n%lx %zx perfmap_thirty\n",
            (unsigned long)(uintptr_t)first, sizeof(seventy),
            (unsigned long)(uintptr_t)(first + 64), sizeof(thirty));
    fclose(map);
  }
  printf("%s\n", path);
  fflush(stdout);

  void (*run_seventy)(uint64_t) = (void (*)(uint64_t))(uintptr_t)first;
  void (*run_thirty)(uint64_t) = (void (*)(uint64_t))(uintptr_t)(first + 64);
  const int64_t start = thread_cpu_ns();
  const int64_t half = start + (int64_t)(seconds * 0.5e9);
  const int64_t deadline = start + (int64_t)(seconds * 1e9);
  int moved = 0;
  while (thread_cpu_ns() < deadline) {
    if (!moved && thread_cpu_ns() >= half) {
      /* A GC moving code: the copy at its new place first, then the record. */
      unsigned char *second = code_page();
      memcpy(second + 128, seventy, sizeof(seventy));
      emit_move(first, second + 128, sizeof(seventy), 1);
      run_seventy = (void (*)(uint64_t))(uintptr_t)(second + 128);
      memset(first, 0xcc, sizeof(seventy)); /* the old place holds no code now */
      moved = 1;
    }
    run_seventy(700000);
    run_thirty(300000);
  }
  struct buf none = {{0}, 0};
  emit(kClose, &none);
  close(dump_fd);
  return 0;
#else
  (void)seconds;
  fprintf(stderr, "jitdump: x86-64 only\n");
  return 3;
#endif
}
