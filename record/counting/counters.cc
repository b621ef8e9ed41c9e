#include "record/counting/counters.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "libsample/events/event_filter.h"
#include "record/events/event_attrs.h"

namespace sample::record {
namespace {

constexpr uint64_t kCountingReadFormat =
    PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
constexpr uint64_t kGroupReadFormat = PERF_FORMAT_GROUP | PERF_FORMAT_ID;

}  // namespace

const char* DefaultCountingEvents() {
  return "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,"
         "branch-misses";
}

perf_event_attr CountingAttr(const EventSpec& spec, bool on_exec, bool inherit) {
  perf_event_attr attr = spec.attr;
  attr.size = sizeof(attr);
  attr.sample_period = 0;
  attr.freq = 0;
  attr.sample_type = 0;
  attr.read_format = kCountingReadFormat;
  const bool leader = spec.IsLeaderOrAlone();
  attr.disabled = leader;
  attr.enable_on_exec = leader && on_exec;
  attr.inherit = inherit;
  return attr;
}

Result<EventCounters> EventCounters::Open(std::vector<EventSpec> specs,
                                          const RecordTarget& target) {
  if (specs.empty()) return Fail("no events to count");
  const size_t count = specs.size();
  EventCounters counters(std::move(specs), std::vector<bool>(count, true));
  counters.on_exec_ = target.kind == TargetKind::kCommand;
  // Per-thread counting on any CPU unless whole CPUs are the target: one fd
  // per event and thread instead of one per CPU too.
  const std::vector<int> cpus =
      target.kind == TargetKind::kCpus ? target.cpus : std::vector<int>{-1};
  for (size_t i = 0; i < counters.specs_.size(); ++i) {
    if (!OpenedOnEveryCpu(counters.specs_[i], target)) continue;
    if (counters.specs_[i].group_index >= 0) {
      return Fail(fmt::format(
          "event '{}': a probe in a group cannot follow new threads (the kernel would make the "
          "program's fork fail): take it out of the group, or count with --no-inherit",
          counters.specs_[i].name));
    }
    counters.every_cpu_[i] = true;
  }
  for (int cpu : cpus) {
    for (pid_t thread : target.threads) {
      auto opened = counters.OpenOn(thread, cpu, counters.on_exec_, target.inherit);
      if (!opened && opened.error().sys_errno == ESRCH && target.threads.size() > 1) continue;
      if (!opened) return tl::unexpected(opened.error());
    }
  }
  // Probes the kernel cannot inherit: once per CPU, for every process.
  for (size_t i = 0; i < counters.specs_.size(); ++i) {
    if (!counters.every_cpu_[i]) continue;
    perf_event_attr attr = CountingAttr(counters.specs_[i], /*on_exec=*/false, /*inherit=*/false);
    attr.config1 = reinterpret_cast<uint64_t>(counters.specs_[i].config1_string());
    for (int cpu : target.cpus) {
      auto event = PerfEvent::Open(attr, -1, cpu, -1, 0);
      if (!event) {
        return Fail(fmt::format("event '{}': {}", counters.specs_[i].name, event.error().message),
                    event.error().sys_errno);
      }
      counters.spec_of_id_[event->id()] = i;
      counters.opened_.push_back({i, std::move(*event), false, false, true});
    }
  }
  if (counters.opened_.empty() && count > 0) {
    bool any = false;
    for (bool s : counters.supported_) any = any || s;
    if (any) return Fail("every target thread exited while attaching");
  }
  return counters;
}

Result<void> EventCounters::OpenOn(pid_t thread, int cpu, bool on_exec, bool inherit) {
  int leader_fd = -1;
  bool leader_supported = true;
  bool leader_group_read = false;
  const size_t first = opened_.size();
  for (size_t i = 0; i < specs_.size(); ++i) {
    const EventSpec& spec = specs_[i];
    if (every_cpu_[i]) continue;  // opened apart, see Open
    if (spec.group_leader) leader_supported = supported_[i];
    const bool member = !spec.IsLeaderOrAlone();
    if (!supported_[i] || (member && !leader_supported)) {
      supported_[i] = false;
      continue;
    }
    perf_event_attr attr = CountingAttr(spec, on_exec, inherit);
    if (const char* pointee = spec.config1_string()) {
      attr.config1 = reinterpret_cast<uint64_t>(pointee);
    }
    // A group is read in one read(2) of its leader, so that every member's
    // value comes from the same moment; kernels that refuse
    // PERF_FORMAT_GROUP with inherit (the man page's warning) get one read
    // per member instead, which sums the same counts.
    const bool group_read = spec.group_leader && group_reads_;
    if (group_read) attr.read_format |= kGroupReadFormat;
    auto event = PerfEvent::Open(attr, thread, cpu, member ? leader_fd : -1, 0);
    if (!event && group_read && event.error().sys_errno == EINVAL) {
      group_reads_ = false;
      attr.read_format &= ~kGroupReadFormat;
      event = PerfEvent::Open(attr, thread, cpu, -1, 0);
    }
    if (!event) {
      const int err = event.error().sys_errno;
      if (err == ENOENT || err == EOPNOTSUPP) {
        // Absent here (a hardware event without a PMU): shown, not fatal.
        supported_[i] = false;
        if (spec.group_leader) leader_supported = false;
        continue;
      }
      if (err == ESRCH) {
        // This thread is gone: none of its fds.
        opened_.erase(opened_.begin() + static_cast<std::ptrdiff_t>(first), opened_.end());
      }
      return Fail(fmt::format("event '{}': {}", spec.name, event.error().message), err);
    }
    if (!spec.filter.empty()) {
      if (auto filtered = event->SetFilter(spec.filter); !filtered) {
        return Fail(FilterRefusedMessage(spec, filtered.error().sys_errno),
                    filtered.error().sys_errno);
      }
    }
    if (spec.group_leader) {
      leader_fd = event->fd();
      leader_group_read = (attr.read_format & PERF_FORMAT_GROUP) != 0;
    }
    spec_of_id_[event->id()] = i;
    opened_.push_back({i, std::move(*event), spec.group_leader && leader_group_read,
                       member && leader_group_read});
  }
  return {};
}

Result<void> EventCounters::Enable() {
  for (Opened& o : opened_) {
    if (!specs_[o.spec].IsLeaderOrAlone() || (on_exec_ && !o.every_cpu)) continue;
    TRY(o.event.Enable());
  }
  return {};
}

void EventCounters::Disable() {
  for (Opened& o : opened_) {
    if (specs_[o.spec].IsLeaderOrAlone()) (void)o.event.Disable();
  }
}

Result<std::vector<CountedEvent>> EventCounters::Read() const {
  std::vector<CountedEvent> counts(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    counts[i].name = specs_[i].name;
    counts[i].supported = supported_[i];
  }
  for (const Opened& o : opened_) {
    if (o.via_leader) continue;  // its value came with the leader's
    const uint64_t format = kCountingReadFormat | (o.group_read ? kGroupReadFormat : 0);
    auto r = ReadCounter(o.event.fd(), format);
    if (!r) {
      return Fail(
          fmt::format("reading the count of '{}': {}", specs_[o.spec].name, r.error().message),
          r.error().sys_errno);
    }
    for (const auto& [value, id] : r->values) {
      // A group's values name their events by id; a lone read is its own.
      const auto found = o.group_read ? spec_of_id_.find(id) : spec_of_id_.end();
      if (o.group_read && found == spec_of_id_.end()) continue;
      CountedEvent& c = counts[o.group_read ? found->second : o.spec];
      c.count += value;
      c.enabled += r->enabled;
      c.running += r->running;
    }
  }
  return counts;
}

}  // namespace sample::record
