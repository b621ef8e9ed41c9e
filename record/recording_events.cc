#include "record/recording_events.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "libsample/events/event_spec.h"
#include "libsample/perf/perf_event_advice.h"
#include "record/events/off_cpu_spec.h"
#include "record/events/ring_size.h"

namespace sample::record {
namespace {

// Parses the -e list `list` (none when empty), adds --filter's filters,
// --off-cpu's event and `added`, and opens them.
Result<void> OpenEventList(const RecordOptions& options, const RecordTarget& target,
                           const std::string& list, const EventParseOptions& parse,
                           const SamplingDefaults& defaults,
                           const std::optional<EventSpec>& off_cpu,
                           const std::vector<EventSpec>& added,
                           std::optional<EventOpener>& opener) {
  std::vector<EventSpec> specs;
  if (!list.empty()) {
    TRY_ASSIGN(specs, ParseEventList(list, parse));
    TRY(AttachFilters(options.events, options.filters, &specs));
  }
  if (off_cpu) specs.push_back(*off_cpu);
  specs.insert(specs.end(), added.begin(), added.end());
  TRY_ASSIGN(auto created, EventOpener::Create(std::move(specs), defaults, target));
  opener.emplace(std::move(created));
  return opener->Open(target);
}

void NoteOpenedEvents(const RecordOptions& options, const EventOpener& opener,
                      const std::optional<int>& paranoid, bool alloc) {
  if (options.quiet) return;
  // Said once the events are open, and only of events it applies to (not
  // of tracepoints, nor of events given u/k/h).
  const auto& specs = opener.specs();
  if (std::any_of(specs.begin(), specs.end(),
                  [](const EventSpec& spec) { return spec.kernel_excluded_by_default; })) {
    fmt::print(stderr, "{}", UserSpaceOnlyNote(*paranoid, "recording"));
  }
  if (options.mmap_pages == 0 && !alloc) {  // --alloc's size is fixed
    fmt::print(stderr, "{}", ChosenRingNote(opener.mmap_pages(), opener.attrs()));
  }
}

}  // namespace

Result<void> OpenRecordingEvents(const RecordOptions& options, const RecordTarget& target,
                                 const std::vector<EventSpec>& added,
                                 std::optional<EventOpener>& opener) {
  SamplingDefaults defaults;
  defaults.frequency = options.frequency;
  defaults.period = options.period;
  defaults.chain_capture = options.chain_capture;
  defaults.max_stack = options.max_stack;
  defaults.delayed = options.delay_ms != 0 || options.start_disabled;
  defaults.separate_tracking = !options.control.empty();
  // Off-CPU time ends at the switch-in record.
  defaults.switch_events = options.switch_events || options.off_cpu;
  defaults.mmap_pages = options.mmap_pages;
  defaults.data = options.data;
  // --alloc records every call (millions a second), whose rate no
  // frequency tells: 4 MiB rings kept 2.4 million records a second whole
  // here (bench/RESULTS.md); root only (as --alloc itself), which no
  // locked-memory limit binds.
  if (!added.empty() && options.mmap_pages == 0 && geteuid() == 0) defaults.mmap_pages = 1024;
  EventParseOptions parse;
  const auto paranoid = ReadPerfEventParanoid();
  parse.exclude_kernel_default = KernelExcludedByParanoia(paranoid);
  // --alloc alone records its calls only.
  const bool default_event = options.events.empty() && added.empty();
  std::string list = default_event ? "cycles" : "";
  for (const std::string& e : options.events) list += (list.empty() ? "" : ",") + e;

  std::optional<EventSpec> off_cpu;
  if (options.off_cpu) {
    auto parsed = OffCpuSpec(parse);
    if (!parsed) return Fail("--off-cpu: " + parsed.error().message, parsed.error().sys_errno);
    off_cpu = std::move(*parsed);
  }
  auto opened = OpenEventList(options, target, list, parse, defaults, off_cpu, added, opener);
  const int err = opened ? 0 : opened.error().sys_errno;
  if (!opened && default_event && (err == ENOENT || err == EOPNOTSUPP)) {
    // perf does the same: no PMU (typical in VMs) means a timer-based event.
    if (!options.quiet) {
      fmt::print(stderr,
                 "sample-record: the hardware event 'cycles' is not available here (no PMU); "
                 "using cpu-clock instead.\n");
    }
    opened = OpenEventList(options, target, "cpu-clock", parse, defaults, off_cpu, added, opener);
  }
  if (!opened) return opened;
  NoteOpenedEvents(options, *opener, paranoid, !added.empty());
  return {};
}

}  // namespace sample::record
