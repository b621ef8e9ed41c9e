#include "report/views/enabled_periods.h"

#include <algorithm>

#include <linux/perf_event.h>

namespace sample::report {
namespace {

bool IsDummy(const EventDesc& e) {
  return e.attr.type == PERF_TYPE_SOFTWARE && e.attr.config == PERF_COUNT_SW_DUMMY;
}

}  // namespace

EnabledPeriods BuildEnabledPeriods(const std::vector<format::ControlEntry>& switches,
                                   const std::vector<EventDesc>& events, uint64_t end_ns) {
  std::vector<format::ControlEntry> ordered = switches;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; });
  const size_t n = events.size();
  std::vector<bool> sampling(n), on(n), seen(n);  // seen: on at some time in the period
  for (size_t i = 0; i < n; ++i) sampling[i] = !IsDummy(events[i]);
  EnabledPeriods out;
  bool open = false;
  bool partial = false;  // some sampling event was off at some time in the period
  EnabledPeriod current;
  auto close = [&](uint64_t at) {
    current.end_ns = std::max(at, current.start_ns);
    if (partial) {
      for (uint32_t i = 0; i < n; ++i) {
        if (seen[i]) current.events.push_back(i);
      }
    }
    out.enabled_ns += current.end_ns - current.start_ns;
    out.periods.push_back(std::move(current));
    current = {};
    open = false;
  };
  for (const format::ControlEntry& s : ordered) {
    const bool value = s.action == format::kControlEnable;
    if (s.event == format::kControlAllEvents) {
      for (size_t i = 0; i < n; ++i) on[i] = sampling[i] && value;
    } else if (s.event < n && sampling[s.event]) {
      on[s.event] = value;
    } else {
      ++out.ignored;
      continue;
    }
    bool any = false, all = true;
    for (size_t i = 0; i < n; ++i) {
      if (!sampling[i]) continue;
      any |= on[i];
      all &= on[i];
    }
    if (any && !open) {
      open = true;
      partial = false;
      current.start_ns = s.time_ns;
      std::fill(seen.begin(), seen.end(), false);
    }
    if (open) {
      partial |= !all && any;
      for (size_t i = 0; i < n; ++i) seen[i] = seen[i] || on[i];
    }
    if (!any && open) close(s.time_ns);
  }
  if (open) close(end_ns);
  return out;
}

}  // namespace sample::report
