/* jit: a fake JIT. Copies a few bytes of x86-64 machine code (a countdown
 * loop) into anonymous executable memory, writes /tmp/perf-PID.map naming it
 * "jit_countdown", as real JITs do for perf, and runs it until the CPU time
 * is used up. Prints the map's path on stdout. x86-64 only.
 *
 * Usage: jit [CPU_SECONDS]   (default 1.0)
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "workload.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const double seconds = cpu_seconds_arg(argc, argv, 1.0);
#if defined(__x86_64__)
  /* countdown(n): dec %rdi; jnz -5; ret */
  static const unsigned char code[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};
  void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  if (mem == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  memcpy(mem, code, sizeof(code));
  char path[64];
  snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
  FILE *map = fopen(path, "w");
  if (map == NULL) {
    perror(path);
    return 1;
  }
  fprintf(map, "%lx %zx jit_countdown\n", (unsigned long)(uintptr_t)mem, sizeof(code));
  fclose(map);
  printf("%s\n", path);
  fflush(stdout);
  void (*countdown)(uint64_t) = (void (*)(uint64_t))mem;
  const int64_t deadline = thread_cpu_ns() + (int64_t)(seconds * 1e9);
  while (thread_cpu_ns() < deadline) countdown(2000000);
  return 0;
#else
  (void)seconds;
  fprintf(stderr, "jit: x86-64 only\n");
  return 3;
#endif
}
