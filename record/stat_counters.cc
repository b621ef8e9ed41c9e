#include "record/stat_counters.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sample::record {
namespace {

bool IsLeaderOrAlone(const EventSpec& spec) { return spec.group_index < 0 || spec.group_leader; }

}  // namespace

Result<CounterTotals> ReadCounterTotals(int fd, uint64_t read_format) {
  // nr (GROUP), the two times, then value and id for each event, and lost:
  // 64 words cover a group of 20 with every field.
  uint64_t words[64] = {};
  const ssize_t n = read(fd, words, sizeof(words));
  if (n < 0) return Fail(strerror(errno), errno);
  size_t at = (read_format & PERF_FORMAT_GROUP) ? 1 : 0;
  const size_t have = static_cast<size_t>(n) / 8;
  CounterTotals totals;
  auto next = [&](uint64_t* out) {
    if (at >= have) return false;
    *out = words[at++];
    return true;
  };
  bool ok = true;
  // One event: value, then the times; a group: the times, then the values.
  if ((read_format & PERF_FORMAT_GROUP) == 0) ok = next(&totals.count);
  if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) ok = ok && next(&totals.enabled);
  if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) ok = ok && next(&totals.running);
  if (read_format & PERF_FORMAT_GROUP) ok = ok && next(&totals.count);
  if (!ok) return Fail(fmt::format("short read of {} bytes", n));
  return totals;
}

const char* DefaultStatEvents() {
  return "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,"
         "branch-misses";
}

perf_event_attr CountingAttr(const EventSpec& spec, bool on_exec, bool inherit) {
  perf_event_attr attr = spec.attr;
  attr.size = sizeof(attr);
  attr.sample_period = 0;
  attr.freq = 0;
  attr.sample_type = 0;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  const bool leader = IsLeaderOrAlone(spec);
  attr.disabled = leader;
  attr.enable_on_exec = leader && on_exec;
  attr.inherit = inherit;
  if (!spec.attr.exclude_user && !spec.attr.exclude_kernel) attr.exclude_hv = 1;
  return attr;
}

Result<StatCounters> StatCounters::Open(std::vector<EventSpec> specs, const RecordTarget& target) {
  if (specs.empty()) return Fail("no events to count");
  const size_t count = specs.size();
  StatCounters counters(std::move(specs), std::vector<bool>(count, true));
  counters.on_exec_ = target.kind == TargetKind::kCommand;
  // Per-thread counting on any CPU unless whole CPUs are the target: one fd
  // per event and thread instead of one per CPU too.
  const std::vector<int> cpus =
      target.kind == TargetKind::kCpus ? target.cpus : std::vector<int>{-1};
  for (int cpu : cpus) {
    for (pid_t thread : target.threads) {
      auto opened = counters.OpenOn(thread, cpu, counters.on_exec_, target.inherit);
      if (!opened && opened.error().sys_errno == ESRCH && target.threads.size() > 1) continue;
      if (!opened) return tl::unexpected(opened.error());
    }
  }
  if (counters.opened_.empty() && count > 0) {
    bool any = false;
    for (bool s : counters.supported_) any = any || s;
    if (any) return Fail("every target thread exited while attaching");
  }
  return counters;
}

Result<void> StatCounters::OpenOn(pid_t thread, int cpu, bool on_exec, bool inherit) {
  int leader_fd = -1;
  bool leader_supported = true;
  const size_t first = opened_.size();
  for (size_t i = 0; i < specs_.size(); ++i) {
    const EventSpec& spec = specs_[i];
    if (spec.group_leader) leader_supported = supported_[i];
    const bool member = !IsLeaderOrAlone(spec);
    if (!supported_[i] || (member && !leader_supported)) {
      supported_[i] = false;
      continue;
    }
    perf_event_attr attr = CountingAttr(spec, on_exec, inherit);
    if (!spec.uprobe_path.empty())
      attr.config1 = reinterpret_cast<uint64_t>(spec.uprobe_path.c_str());
    auto event = PerfEvent::Open(attr, thread, cpu, member ? leader_fd : -1, 0);
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
    if (spec.group_leader) leader_fd = event->fd();
    opened_.push_back({i, std::move(*event)});
  }
  return {};
}

Result<void> StatCounters::Enable() {
  for (Opened& o : opened_) {
    if (!IsLeaderOrAlone(specs_[o.spec]) || on_exec_) continue;
    TRY(o.event.Enable());
  }
  return {};
}

void StatCounters::Disable() {
  for (Opened& o : opened_) {
    if (IsLeaderOrAlone(specs_[o.spec])) (void)o.event.Disable();
  }
}

Result<std::vector<StatCount>> StatCounters::Read() const {
  std::vector<StatCount> counts(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    counts[i].name = specs_[i].name;
    counts[i].supported = supported_[i];
  }
  for (const Opened& o : opened_) {
    auto r = ReadCounterTotals(o.event.fd(),
                               PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
    if (!r) {
      return Fail(
          fmt::format("reading the count of '{}': {}", specs_[o.spec].name, r.error().message),
          r.error().sys_errno);
    }
    StatCount& c = counts[o.spec];
    c.count += r->count;
    c.enabled += r->enabled;
    c.running += r->running;
  }
  return counts;
}

}  // namespace sample::record
