/* hits: events that happen an exact number of times, for the tests that
 * every hit of a tracepoint, uprobe, uretprobe or watchpoint is sampled.
 *
 * Usage: hits N        calls hit() N times; each call writes the global
 *                      `watched` once and write(2)s one byte to /dev/null.
 *                      Nothing else in the process calls write(2) or
 *                      stores to `watched` (it prints nothing).
 *        hits address  prints the address of `watched` and exits.
 *        hits sizes N M  write(2)s 512 bytes N times, then 100 bytes M
 *                      times, to /dev/null on fd 42 (nothing else), for tracepoint
 *                      payloads and filters on the write's count.
 *
 * Built without PIE, so `watched` has the same address in every run and a
 * test can ask for it first, then record mem:ADDR:w on another run. It is
 * initialized data, not .bss: the kernel zeroes the tail of the page where
 * .bss starts while loading, which would count as a store.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TESTED __attribute__((noinline, noclone))

volatile long watched __attribute__((aligned(64))) = 1;

TESTED void hit(int fd, long i) {
  watched = i;
  if (write(fd, "x", 1) != 1) exit(3);
}

int main(int argc, char** argv) {
  if (argc < 2 || (argc != 2 && argv[1][0] != 's')) {
    fprintf(stderr, "usage: hits N | hits address | hits sizes N M\n");
    return 2;
  }
  if (argv[1][0] == 's') {
    if (argc != 4) return 2;
    static char buffer[512];
    const long big = strtol(argv[2], NULL, 10), small = strtol(argv[3], NULL, 10);
    /* On fd 42 whatever the caller left open, so tests know the fd. */
    const int fd = dup2(open("/dev/null", O_WRONLY), 42);
    if (fd != 42) return 3;
    for (long i = 0; i < big; ++i) {
      if (write(fd, buffer, 512) != 512) return 3;
    }
    for (long i = 0; i < small; ++i) {
      if (write(fd, buffer, 100) != 100) return 3;
    }
    return 0;
  }
  if (argv[1][0] == 'a') {
    printf("%p\n", (void*)&watched);
    return 0;
  }
  const long n = strtol(argv[1], NULL, 10);
  const int fd = open("/dev/null", O_WRONLY);
  if (fd < 0) return 3;
  for (long i = 0; i < n; ++i) hit(fd, i);
  return 0;
}
