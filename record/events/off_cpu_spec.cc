#include "record/events/off_cpu_spec.h"

#include <utility>

#include <fmt/format.h>

namespace sample::record {

// The sched:sched_switch tracepoint fires in the scheduler while the task
// leaving is still current, before its per-task events are switched out,
// so a per-task event sees exactly its own switch-outs and its call chain
// (kernel and user, or the user stack copy for dwarf) is where the thread
// waits. Sampled every hit whatever -F or -c say: each switch-out opens an
// interval the report must close. A switch event plus the thread's last
// sample would be the chain of some earlier moment, not the wait's. The
// payload (PERF_SAMPLE_RAW) is recorded as for every tracepoint, so
// --script shows prev and next by name; the report's intervals need only
// the switch records (their time, and whether the thread was preempted).
Result<EventSpec> OffCpuSpec(const EventParseOptions& parse) {
  auto specs = ParseEventList("sched:sched_switch", parse);
  if (!specs) {
    return Fail(fmt::format("{} (off-CPU time is timed from the sched:sched_switch tracepoint: "
                            "tracefs must be mounted and readable, usually as root)",
                            specs.error().message),
                specs.error().sys_errno);
  }
  EventSpec spec = std::move(specs->front());
  spec.period_given = true;
  spec.attr.freq = 0;
  spec.attr.sample_period = 1;
  return spec;
}

}  // namespace sample::record
