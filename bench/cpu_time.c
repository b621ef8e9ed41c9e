/* cpu_time: runs a command and writes "WALL USER SYS" (seconds, microsecond
 * precision) to FILE: the command's wall time and the CPU time of it and of
 * every descendant it waited for, from wait4's rusage. It is
 * /usr/bin/time -f '%e %U %S' without the rounding to 10 ms, which is as
 * large as some of the recorder costs bench/dwarf_record_bench.sh measures.
 *
 * Usage: cpu_time FILE COMMAND [ARGS...]   (exits with the command's status,
 * 128 + N when killed by signal N)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s FILE COMMAND [ARGS...]\n", argv[0]);
    return 2;
  }
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  const pid_t pid = fork();
  if (pid < 0) {
    perror("cpu_time: fork");
    return 1;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    perror("cpu_time: exec");
    _exit(127);
  }
  int status = 0;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) != pid) {
    perror("cpu_time: wait4");
    return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  FILE* out = fopen(argv[1], "w");
  if (out == NULL) {
    perror("cpu_time: fopen");
    return 1;
  }
  const double wall =
      (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
  fprintf(out, "%.6f %.6f %.6f\n", wall, seconds(usage.ru_utime), seconds(usage.ru_stime));
  fclose(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
