// OffCpuSpec: --off-cpu's event, sched:sched_switch sampled at every hit,
// added to the -e list by the recorder (why this tracepoint: the
// definition's comment).
#pragma once

#include "libsample/events/event_spec.h"
#include "libsample/result.h"

namespace sample::record {

// The parsed sched:sched_switch spec, with a fixed period of 1 whatever -F
// or -c say; fails with a hint when tracefs cannot name the tracepoint.
Result<EventSpec> OffCpuSpec(const EventParseOptions& parse);

}  // namespace sample::record
