#include "record/events/event_opener.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "libsample/events/event_filter.h"
#include "libsample/perf/perf_record.h"
#include "record/events/counter_reads.h"

namespace sample::record {

std::vector<format::ToggleEntry> ToggleEntries(const std::vector<EventSpec>& specs) {
  std::vector<format::ToggleEntry> entries;
  for (size_t t = 0; t < specs.size(); ++t) {
    for (const ToggleAction& action : specs[t].toggles) {
      // The group's members follow its leader: each gets the relation too,
      // so a reader needs to know nothing of groups.
      for (size_t i = action.target; i < specs.size(); ++i) {
        if (i != action.target && (specs[action.target].group_index < 0 ||
                                   specs[i].group_index != specs[action.target].group_index)) {
          break;
        }
        format::ToggleEntry entry{};
        entry.trigger = static_cast<uint32_t>(t);
        entry.target = static_cast<uint32_t>(i);
        entry.action = action.on ? format::kToggleOn : format::kToggleOff;
        entry.scope = specs[t].toggle_scope == ToggleScope::kCpu ? format::kToggleCpu
                                                                  : format::kToggleThread;
        entry.target_starts_on = specs[i].starts_on ? 1 : 0;
        entries.push_back(entry);
      }
    }
  }
  return entries;
}

std::vector<format::TraceFormatEntry> TraceFormatEntries(const std::vector<EventSpec>& specs) {
  std::vector<format::TraceFormatEntry> entries;
  for (size_t i = 0; i < specs.size(); ++i) {
    const EventSpec& spec = specs[i];
    if (spec.attr.type != PERF_TYPE_TRACEPOINT) continue;
    entries.push_back({static_cast<uint32_t>(i), spec.attr.config, spec.trace_format, spec.filter});
  }
  return entries;
}

Result<EventOpener> EventOpener::Create(std::vector<EventSpec> specs,
                                        const SamplingDefaults& defaults,
                                        const RecordTarget& target) {
  TRY_ASSIGN(auto built, BuildEventAttrs(std::move(specs), defaults, target, ReadHostLimits()));
  return EventOpener(std::move(built));
}

Result<void> EventOpener::EnableTracking() { return Enable(/*tracking_only=*/true); }

Result<void> EventOpener::EnableAll() { return Enable(/*tracking_only=*/false); }

Result<void> EventOpener::Enable(bool tracking_only) {
  for (size_t k = 0; k < events_.size(); ++k) {
    const size_t spec = event_specs_[k];
    if (tracking_only && spec != tracking_) continue;
    if (!specs_[spec].IsLeaderOrAlone()) continue;  // members follow their leader
    // enable_on_exec events wait for the exec; turning them on now would
    // sample the launcher between fork and exec.
    if (attrs_[spec].enable_on_exec) continue;
    if (auto enabled = events_[k].Enable(); !enabled) return enabled;
  }
  return {};
}

Result<void> EventOpener::SetSampling(bool on, std::optional<size_t> spec) {
  for (size_t k = 0; k < events_.size(); ++k) {
    const size_t i = event_specs_[k];
    if (dummy_tracking_ && i == tracking_) continue;
    if (!specs_[i].IsLeaderOrAlone() || (spec && i != *spec)) continue;
    // After the exec an enable_on_exec event is switched like any other.
    auto done = on ? events_[k].Enable() : events_[k].Disable();
    if (!done) {
      return Fail(fmt::format("{} '{}': {}", on ? "enabling" : "disabling", specs_[i].name,
                              done.error().message));
    }
  }
  return {};
}

Result<size_t> EventOpener::FindSwitchable(std::string_view name) const {
  std::string names;
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (dummy_tracking_ && i == tracking_) continue;
    if (specs_[i].name == name) {
      if (specs_[i].IsLeaderOrAlone()) return i;
      for (const EventSpec& leader : specs_) {
        if (leader.group_leader && leader.group_index == specs_[i].group_index) {
          return Fail(
              fmt::format("'{}' is a group member: it follows its leader '{}'", name, leader.name));
        }
      }
    }
    names += (names.empty() ? "" : ", ") + specs_[i].name;
  }
  return Fail(fmt::format("no event named '{}' (events: {})", name, names));
}

Result<void> EventOpener::Open(const RecordTarget& target) {
  events_.clear();
  event_specs_.clear();
  event_threads_.clear();
  ring_owners_.clear();
  for (auto& ids : ids_) ids.clear();
  exec_wakers_.clear();
  for (int cpu : target.cpus) {
    const size_t owner = events_.size();
    std::vector<bool> opened_on_cpu(specs_.size(), false);
    for (pid_t thread : target.threads) {
      const size_t thread_start = events_.size();
      int leader_fd = -1;
      bool thread_gone = false;
      for (size_t i = 0; i < specs_.size() && !thread_gone; ++i) {
        // Opened once per CPU, with the first thread whose events open.
        if (every_cpu_[i] && opened_on_cpu[i]) continue;
        const pid_t pid = every_cpu_[i] ? -1 : thread;
        perf_event_attr attr = attrs_[i];
        if (const char* pointee = specs_[i].config1_string()) {
          // The kernel copies the uprobe's path or the kprobe's function
          // name from this pointer during the call.
          attr.config1 = reinterpret_cast<uint64_t>(pointee);
        }
        const int group_fd = specs_[i].IsLeaderOrAlone() ? -1 : leader_fd;
        auto event = PerfEvent::Open(attr, pid, cpu, group_fd, 0);
        if (!event) {
          if (event.error().sys_errno == ESRCH && target.threads.size() > 1) {
            thread_gone = true;
            break;
          }
          const int err = event.error().sys_errno;
          if (!specs_[i].kprobe_function.empty() && (err == ENOENT || err == EINVAL)) {
            return Fail(
                fmt::format("event '{}': {}; is '{}' a kernel function in /proc/kallsyms "
                            "that kprobes may probe (not inlined, not on the kprobe "
                            "blacklist), and the offset at an instruction?",
                            specs_[i].name, event.error().message, specs_[i].kprobe_function),
                err);
          }
          return Fail(fmt::format("event '{}': {}", specs_[i].name, event.error().message), err);
        }
        if (!specs_[i].filter.empty()) {
          if (auto filtered = event->SetFilter(specs_[i].filter); !filtered) {
            return Fail(FilterRefusedMessage(specs_[i], filtered.error().sys_errno),
                        filtered.error().sys_errno);
          }
        }
        if (specs_[i].group_leader) leader_fd = event->fd();
        ids_[i].push_back(event->id());
        events_.push_back(std::move(*event));
        event_specs_.push_back(i);
        event_threads_.push_back(pid);
        opened_on_cpu[i] = true;
      }
      if (thread_gone) {
        // Drop what was opened for this thread (and its ids).
        for (size_t k = thread_start; k < events_.size(); ++k) {
          if (event_threads_[k] == -1) opened_on_cpu[event_specs_[k]] = false;
          for (auto& ids : ids_) std::erase(ids, events_[k].id());
        }
        events_.erase(events_.begin() + static_cast<std::ptrdiff_t>(thread_start), events_.end());
        event_specs_.resize(thread_start);
        event_threads_.resize(thread_start);
      }
    }
    if (events_.size() == owner) return Fail("every target thread exited while attaching");
    ring_owners_.push_back(owner);
    if (auto mapped = events_[owner].Map(mmap_pages_); !mapped) return mapped;
    for (size_t i = owner + 1; i < events_.size(); ++i) {
      if (auto redirected = events_[i].RedirectOutputTo(events_[owner]); !redirected) {
        return redirected;
      }
    }
    OpenExecWakers(owner, cpu);
  }
  return {};
}

void EventOpener::OpenExecWakers(size_t owner, int cpu) {
  // After the sampling ring: its pages come first in the locked-memory
  // budget (perf_event_mlock_kb) a user without CAP_IPC_LOCK has.
  for (size_t k = owner; k < events_.size(); ++k) {
    if (event_specs_[k] == tracking_) OpenExecWaker(event_threads_[k], cpu);
  }
}

void EventOpener::OpenExecWaker(pid_t pid, int cpu) {
  const perf_event_attr& tracking = attrs_[tracking_];
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_period = 1;  // a dummy never samples
  attr.comm = 1;
  attr.comm_exec = 1;
  // A wakeup at every record: wakeup_events counts samples only, while a
  // byte watermark counts every record (COMM, which a dummy's ring holds).
  attr.watermark = 1;
  attr.wakeup_watermark = 1;
  attr.inherit = tracking.inherit;
  attr.exclude_kernel = tracking.exclude_kernel;
  attr.exclude_hv = tracking.exclude_hv;
  auto event = PerfEvent::Open(attr, pid, cpu, -1, 0);
  if (!event || !event->Map(1)) return;
  exec_wakers_.push_back(std::move(*event));
}

Result<format::Counts> EventOpener::ReadCounts(uint64_t elapsed_ns) const {
  format::Counts counts;
  counts.source = format::kCountsFromSampling;
  counts.elapsed_ns = elapsed_ns;
  std::vector<size_t> index(specs_.size(), SIZE_MAX);  // spec -> its entry in counts
  for (size_t i = 0; i < specs_.size(); ++i) {
    const perf_event_attr& a = attrs_[i];
    // The -D sideband dummy counts nothing.
    if (a.type == PERF_TYPE_SOFTWARE && a.config == PERF_COUNT_SW_DUMMY) continue;
    index[i] = counts.events.size();
    format::EventCounts e;
    e.name = specs_[i].name;
    e.attr = a;
    e.attr.config1 = specs_[i].config1_string() == nullptr ? a.config1 : 0;  // no stale pointer
    counts.events.push_back(std::move(e));
  }
  std::vector<FdTotals> fds;
  for (size_t k = 0; k < events_.size(); ++k) {
    const size_t spec = event_specs_[k];
    if (index[spec] == SIZE_MAX) continue;
    auto totals = ReadCounterTotals(events_[k].fd(), attrs_[spec].read_format);
    if (!totals) {
      return Fail(
          fmt::format("reading the count of '{}': {}", specs_[spec].name, totals.error().message));
    }
    fds.push_back({index[spec], event_threads_[k], *totals});
  }
  const std::vector<CounterTotals> sums = SumFdTotals(fds, counts.events.size());
  for (size_t i = 0; i < sums.size(); ++i) {
    counts.events[i].count = sums[i].count;
    counts.events[i].time_enabled = sums[i].enabled;
    counts.events[i].time_running = sums[i].running;
  }
  return counts;
}

std::vector<EventDesc> EventOpener::DescribeFile() const {
  std::vector<EventDesc> descs = Describe();
  if (cpu_field_) {
    for (EventDesc& d : descs) d.attr.sample_type |= PERF_SAMPLE_CPU;
  }
  return descs;
}

std::vector<EventDesc> EventOpener::Describe() const {
  std::vector<EventDesc> descs;
  for (size_t i = 0; i < specs_.size(); ++i) {
    EventDesc d;
    d.attr = attrs_[i];
    d.attr.config1 =
        specs_[i].config1_string() == nullptr ? attrs_[i].config1 : 0;  // no stale pointer
    d.name = specs_[i].name;
    d.ids = ids_[i];
    descs.push_back(std::move(d));
  }
  return descs;
}

}  // namespace sample::record
