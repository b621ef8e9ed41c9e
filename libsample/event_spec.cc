#include "libsample/event_spec.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace sample {
namespace {

struct NamedEvent {
  std::string_view name;
  std::string_view canonical;
  uint32_t type;
  uint64_t config;
};

constexpr std::array kEvents = {
    NamedEvent{"cpu-clock", "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    NamedEvent{"task-clock", "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    NamedEvent{"page-faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    NamedEvent{"faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    NamedEvent{"minor-faults", "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    NamedEvent{"major-faults", "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    NamedEvent{"context-switches", "context-switches", PERF_TYPE_SOFTWARE,
               PERF_COUNT_SW_CONTEXT_SWITCHES},
    NamedEvent{"cs", "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    NamedEvent{"cpu-migrations", "cpu-migrations", PERF_TYPE_SOFTWARE,
               PERF_COUNT_SW_CPU_MIGRATIONS},
    NamedEvent{"migrations", "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    NamedEvent{"alignment-faults", "alignment-faults", PERF_TYPE_SOFTWARE,
               PERF_COUNT_SW_ALIGNMENT_FAULTS},
    NamedEvent{"emulation-faults", "emulation-faults", PERF_TYPE_SOFTWARE,
               PERF_COUNT_SW_EMULATION_FAULTS},
    NamedEvent{"dummy", "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY},
    NamedEvent{"cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    NamedEvent{"cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    NamedEvent{"instructions", "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    NamedEvent{"cache-references", "cache-references", PERF_TYPE_HARDWARE,
               PERF_COUNT_HW_CACHE_REFERENCES},
    NamedEvent{"cache-misses", "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    NamedEvent{"branches", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    NamedEvent{"branch-instructions", "branches", PERF_TYPE_HARDWARE,
               PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    NamedEvent{"branch-misses", "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    NamedEvent{"bus-cycles", "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    NamedEvent{"ref-cycles", "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
    NamedEvent{"stalled-cycles-frontend", "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
               PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    NamedEvent{"stalled-cycles-backend", "stalled-cycles-backend", PERF_TYPE_HARDWARE,
               PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
};

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

Result<EventSpec> LookupEvent(std::string_view name) {
  for (const NamedEvent& e : kEvents) {
    if (e.name == name) return EventSpec{std::string(e.canonical), e.type, e.config};
  }
  std::vector<std::string> close;
  for (const NamedEvent& e : kEvents) {
    if (EditDistance(name, e.name) <= std::max<size_t>(2, name.size() / 3) ||
        (name.size() >= 3 && e.name.find(name) != std::string_view::npos)) {
      close.emplace_back(e.name);
    }
  }
  if (close.empty()) {
    return Fail(fmt::format("unknown event '{}' (sample-record --list-events shows all)", name));
  }
  return Fail(fmt::format("unknown event '{}'; did you mean: {}?", name, fmt::join(close, ", ")));
}

std::vector<std::string> KnownEventNames() {
  std::vector<std::string> names;
  for (const NamedEvent& e : kEvents) names.emplace_back(e.name);
  return names;
}

}  // namespace sample
