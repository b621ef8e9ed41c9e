/* Page faults with known data addresses, for -d (data addresses):
 *   write_anon   touches 3000 pages of anonymous memory    (3000 faults)
 *   read_file    reads one byte per 2 MiB of a mapped file  (2000 faults)
 *   write_table  writes 1000 pages of an initialized global (1000 faults)
 * so page-fault samples split 50/33/17 between them, with data addresses in
 * an anonymous mapping, in the file given as argv[1] (made here, 4 GiB,
 * sparse) and in this binary's data segment (the global `fault_table`).
 *
 * One fault each: transparent huge pages are refused for the anonymous
 * memory; a read fault maps the page cache around it (fault-around, up to a
 * large folio), never across a 2 MiB boundary, so reads 2 MiB apart fault
 * once each; writes to a
 * private mapping of this binary copy one page each.
 *
 * For --alloc: write_anon's 12288000 bytes of anonymous memory are mapped
 * and unmapped (a block from mmap to munmap); read_file's mapping of a
 * file is no allocation. Usage: faults FILE [ROUNDS]: ROUNDS (default 1)
 * times write_anon and read_file, 5000 faults a round, then write_table. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define PAGE 4096
#define ANON_PAGES 3000
#define FILE_READS 2000
#define FILE_STRIDE (2 * 1024 * 1024)
#define TABLE_PAGES 1000

/* Initialized, so it lives in the file-backed data segment, not in .bss. */
char fault_table[TABLE_PAGES * PAGE] = {1};
volatile uint64_t sink;

NOINLINE static void write_anon(void) {
  const size_t size = (size_t)ANON_PAGES * PAGE;
  char* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  madvise(p, size, MADV_NOHUGEPAGE);
  for (size_t i = 0; i < size; i += PAGE) p[i] = (char)i;
  sink += (uint64_t)p[PAGE];
  munmap(p, size);
}

NOINLINE static void read_file(const char* path) {
  const size_t size = (size_t)FILE_READS * FILE_STRIDE;
  const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
    perror(path);
    exit(1);
  }
  const char* p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  /* No readahead: each fault reads one page, not a large folio of zeros. */
  madvise((void*)p, size, MADV_RANDOM);
  uint64_t sum = 0;
  for (size_t i = 0; i < size; i += FILE_STRIDE) sum += (uint64_t)p[i];
  sink += sum;
  munmap((void*)p, size);
  close(fd);
}

NOINLINE static void write_table(void) {
  for (size_t i = 0; i < sizeof fault_table; i += PAGE) fault_table[i] = (char)(i >> 12);
  sink += (uint64_t)fault_table[PAGE];
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: faults FILE [ROUNDS]\n");
    return 2;
  }
  /* More rounds for benchmarks: each maps the memory and the file anew. */
  const long rounds = argc == 3 ? strtol(argv[2], NULL, 10) : 1;
  for (long round = 0; round < rounds; ++round) {
    write_anon();
    read_file(argv[1]);
  }
  write_table();
  unlink(argv[1]);
  return 0;
}
