// Event names as perf spells them, mapped to perf_event_attr type/config.
//
// This first version knows the generic software and hardware events; the
// full perf syntax (modifiers, PMU terms, tracepoints, probes) grows here.
#pragma once

#include <linux/perf_event.h>

#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

struct EventSpec {
  std::string name;  // canonical name, e.g. "cpu-clock"
  uint32_t type = PERF_TYPE_SOFTWARE;
  uint64_t config = PERF_COUNT_SW_CPU_CLOCK;
};

// Looks up one event by name or alias; the error lists close matches.
Result<EventSpec> LookupEvent(std::string_view name);

// Every name LookupEvent accepts, canonical names first.
std::vector<std::string> KnownEventNames();

}  // namespace sample
