/* twins' second file: a static `spin` of its own (see twins.c). */
#include "workload.h"

static volatile uint64_t other_sink;

static NOINLINE void spin(int64_t share_ns) {
  SPIN_UNTIL(thread_cpu_ns() + share_ns, &other_sink, 2862933555777941757ull, 3037000493ull);
}

NOINLINE void other_spin_for(int64_t share_ns) { spin(share_ns); }
