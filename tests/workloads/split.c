/* split: a CPU-bound workload whose CPU time splits 60/30/10 between
 * compute_sixty, compute_thirty and compute_ten by construction.
 *
 * Each round, run_round() calls the three functions; each spins on arithmetic
 * until this thread's CPU time (CLOCK_THREAD_CPUTIME_ID) has advanced by its
 * share of a 10 ms round: 6 ms, 3 ms, 1 ms. The split therefore does not depend
 * on machine speed.
 *
 * CLOCK_THREAD_CPUTIME_ID is a real system call (no vDSO, ~0.5 us), so the
 * clock is read only every CHECK_EVERY iterations (~70 us at ~1 ns per
 * iteration): under 1% of the time goes to reading it. Each function carries
 * its overshoot past the deadline into its next call, so the totals stay
 * 60/30/10 however coarse the check is.
 *
 * Usage: split [CPU_SECONDS]   (default 1.0; decimals allowed)
 */
#include "workload.h"

static volatile uint64_t sink;


/* Spins until the thread CPU clock has advanced by budget_ns plus the carry
 * (the previous call's overshoot, <= 0), then stores the new overshoot in
 * carry. A macro rather than a helper function so the samples land in the
 * compute_* function itself, with no inlined frame in between. */
#define SPIN_FOR(budget_ns, carry, mul, add)                             \
  do {                                                                   \
    int64_t start_ = thread_cpu_ns();                                    \
    int64_t target_ = (budget_ns) + (carry);                             \
    int64_t elapsed_ = 0;                                                \
    uint64_t x_ = sink;                                                  \
    while (elapsed_ < target_) {                                         \
      for (int i_ = 0; i_ < CHECK_EVERY; ++i_) x_ = x_ * (mul) + (add);  \
      sink = x_;                                                         \
      elapsed_ = thread_cpu_ns() - start_;                               \
    }                                                                    \
    (carry) = target_ - elapsed_;                                        \
  } while (0)

static int64_t carry_sixty, carry_thirty, carry_ten;

NOINLINE void compute_sixty(void) {
  SPIN_FOR(6000000, carry_sixty, 6364136223846793005ULL, 1442695040888963407ULL);
}

NOINLINE void compute_thirty(void) {
  SPIN_FOR(3000000, carry_thirty, 2862933555777941757ULL, 3037000493ULL);
}

NOINLINE void compute_ten(void) {
  SPIN_FOR(1000000, carry_ten, 3935559000370003845ULL, 2691343689449507681ULL);
}

NOINLINE void run_round(void) {
  compute_sixty();
  compute_thirty();
  compute_ten();
}

int main(int argc, char **argv) {
  const double seconds = cpu_seconds_arg(argc, argv, 1.0);
  int64_t total_ns = (int64_t)(seconds * 1e9);
  int64_t start = thread_cpu_ns();
  long rounds = 0;
  while (thread_cpu_ns() - start < total_ns) {
    run_round();
    ++rounds;
  }
  /* Tests compare this with the number of uprobe hits on run_round. */
  if (getenv("SPLIT_PRINT_ROUNDS") != NULL) fprintf(stderr, "rounds: %ld\n", rounds);
  return 0;
}
