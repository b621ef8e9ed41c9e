#include "record/events/event_listing.h"

#include <iostream>

#include <fmt/format.h>

#include "libsample/events/event_spec.h"
#include "libsample/perf/perf_event.h"

namespace sample::record {
namespace {

// Hardware events are listed only when this machine can count them.
bool Opens(const std::string& name) {
  auto specs = ParseEventList(name, {});
  if (!specs || specs->size() != 1) return false;
  perf_event_attr attr = specs->front().attr;
  attr.size = sizeof(attr);
  attr.exclude_kernel = 1;
  auto event = PerfEvent::Open(attr, 0, -1, -1, 0);
  return event.has_value();
}

}  // namespace

int ListEvents(const std::string& glob) {
  auto names = sample::ListEvents({}, glob);
  if (!names) {
    std::cerr << "sample-record: --list-events " << names.error().message << "\n";
    return 1;
  }
  size_t listed = 0;
  for (const std::string& name : *names) {
    auto specs = ParseEventList(name, {});
    const bool hardware = specs && specs->size() == 1 &&
                          (specs->front().attr.type == PERF_TYPE_HARDWARE ||
                           specs->front().attr.type == PERF_TYPE_HW_CACHE);
    if (hardware && !Opens(name)) continue;
    std::cout << name << "\n";
    ++listed;
  }
  if (!glob.empty()) {
    if (listed == 0) {
      std::cerr << "sample-record: --list-events: no event matches '" << glob << "'\n";
      return 1;
    }
    return 0;
  }
  for (const EventForm& form : ParametrizedEventForms({})) {
    std::cout << fmt::format("{:<32}{}\n", form.syntax, form.description);
  }
  return 0;
}

}  // namespace sample::record
