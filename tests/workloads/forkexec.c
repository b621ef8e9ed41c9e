/* forkexec: usage `forkexec CHILD_PATH [CHILD_PATH...]`.
 * Forks and execs each child with the argument "0.3", spins about 0.1 s of
 * CPU itself in parent_work (so the parent shows up in a profile too), waits
 * for every child and exits non-zero if any child failed.
 */
#include "workload.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile uint64_t sink;

NOINLINE void parent_work(int64_t budget_ns) {
  SPIN_UNTIL(thread_cpu_ns() + budget_ns, &sink, 2862933555777941757ULL, 3037000493ULL);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CHILD_PATH [CHILD_PATH...]\n", argv[0]);
    return 2;
  }
  int failed = 0;
  int started = 0;
  for (int i = 1; i < argc; ++i) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      failed = 1;
      continue;
    }
    if (pid == 0) {
      char *child_argv[] = {argv[i], "0.3", NULL};
      execv(argv[i], child_argv);
      perror(argv[i]);
      _exit(127);
    }
    ++started;
  }
  parent_work(100000000);
  for (int i = 0; i < started; ++i) {
    int status = 0;
    pid_t pid = wait(&status);
    if (pid < 0) {
      perror("wait");
      failed = 1;
      break;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "forkexec: child %ld failed (status 0x%x)\n", (long)pid, status);
      failed = 1;
    }
  }
  return failed ? 1 : 0;
}
