// --filter: a tracepoint's kernel filter expression ("count == 512"), given
// on the command line after the -e that names the tracepoint, as perf takes
// it. The kernel applies it (PERF_EVENT_IOC_SET_FILTER) before a sample is
// written, so hits that do not match cost no ring-buffer space.
#pragma once

#include <cerrno>
#include <cstddef>
#include <string>
#include <vector>

#include "libsample/events/event_spec.h"
#include "libsample/result.h"

namespace sample {

// A --filter as given: the index of the -e argument it followed.
struct EventFilterArg {
  size_t event_argument = 0;
  std::string expression;
};

// Sets the filter of the last event of each filter's -e argument in
// `specs` (the events of `event_arguments` in order, as ParseEventList of
// their comma-joined list gives them). Fails, naming the filter and the
// event, when that event is not a tracepoint.
Result<void> AttachFilters(const std::vector<std::string>& event_arguments,
                           const std::vector<EventFilterArg>& filters,
                           std::vector<EventSpec>* specs);

// What to say when the kernel refused `spec`'s filter with `err`: the
// filter, the event, and for EINVAL the fields the expression may name
// (from the event's format).
std::string FilterRefusedMessage(const EventSpec& spec, int err);

}  // namespace sample
