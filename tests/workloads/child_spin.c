/* child-alpha / child-beta: spin CPU-bound in child_work for N seconds of
 * thread CPU time (argv[1], default 0.3). Built twice under two names so a
 * profile of forkexec shows two distinct commands.
 */
#include "workload.h"

static volatile uint64_t sink;

NOINLINE void child_work(int64_t budget_ns) {
  SPIN_UNTIL(thread_cpu_ns() + budget_ns, &sink, 6364136223846793005ULL, 1442695040888963407ULL);
}

int main(int argc, char **argv) {
  const double seconds = cpu_seconds_arg(argc, argv, 0.3);
  child_work((int64_t)(seconds * 1e9));
  return 0;
}
