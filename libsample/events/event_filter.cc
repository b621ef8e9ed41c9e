#include "libsample/events/event_filter.h"

#include <cstring>

#include <fmt/format.h>

#include "libsample/events/event_list_syntax.h"
#include "libsample/events/trace_format.h"

namespace sample {

Result<void> AttachFilters(const std::vector<std::string>& event_arguments,
                           const std::vector<EventFilterArg>& filters,
                           std::vector<EventSpec>* specs) {
  // The index in `specs` of each argument's last event.
  std::vector<size_t> last;
  size_t count = 0;
  for (const std::string& argument : event_arguments) {
    TRY_ASSIGN(auto events, SplitEventList(argument));
    count += events.size();
    last.push_back(count - 1);
  }
  for (const EventFilterArg& filter : filters) {
    if (filter.event_argument >= last.size() || last[filter.event_argument] >= specs->size()) {
      return Fail(fmt::format("--filter '{}' follows no -e event", filter.expression));
    }
    EventSpec& spec = (*specs)[last[filter.event_argument]];
    if (spec.attr.type != PERF_TYPE_TRACEPOINT) {
      return Fail(fmt::format(
          "--filter '{}' follows '{}', which is not a tracepoint: a filter applies to the "
          "tracepoint just before it (-e SUBSYSTEM:EVENT --filter 'EXPR')",
          filter.expression, spec.name));
    }
    if (!spec.filter.empty()) {
      return Fail(fmt::format("'{}' has two filters ('{}' and '{}'): join them with &&", spec.name,
                              spec.filter, filter.expression));
    }
    if (filter.expression.empty())
      return Fail(fmt::format("--filter after '{}' is empty", spec.name));
    spec.filter = filter.expression;
  }
  return {};
}

std::string FilterRefusedMessage(const EventSpec& spec, int err) {
  if (err != EINVAL) {
    return fmt::format("cannot set the filter '{}' of '{}': {}", spec.filter, spec.name,
                       std::strerror(err));
  }
  std::vector<std::string> names;
  if (auto format = ParseTraceFormat(spec.trace_format)) {
    for (const TraceField& field : format->fields) {
      if (!field.common()) names.push_back(field.name);
    }
  }
  return fmt::format(
      "the kernel refused the filter '{}' of '{}' (EINVAL): a filter compares the event's fields "
      "with numbers or strings (==, !=, <, <=, >, >=, &, ~ for strings, joined by && and ||){}",
      spec.filter, spec.name,
      names.empty() ? std::string() : fmt::format("; its fields: {}", fmt::join(names, ", ")));
}

}  // namespace sample
