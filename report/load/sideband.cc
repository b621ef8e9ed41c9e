#include "report/load/sideband.h"

#include <algorithm>
#include <string_view>

#include "libsample/perf/perf_record.h"
#include "report/load/alloc_events.h"
#include "report/load/recording_loader.h"

namespace sample::report {
namespace {

constexpr std::string_view kSchedSwitch = "sched:sched_switch";

}  // namespace

bool HasOffCpuEvents(const std::vector<EventDesc>& events) {
  const bool switches =
      std::ranges::any_of(events, [](const EventDesc& e) { return e.attr.context_switch != 0; });
  const bool sched_switch =
      std::ranges::any_of(events, [](const EventDesc& e) { return e.name == kSchedSwitch; });
  return switches && sched_switch;
}

std::optional<uint32_t> OnCpuClockEvent(const std::vector<EventDesc>& events) {
  for (uint32_t e = 0; e < events.size(); ++e) {
    const perf_event_attr& attr = events[e].attr;
    if (attr.type == PERF_TYPE_SOFTWARE &&
        (attr.config == PERF_COUNT_SW_CPU_CLOCK || attr.config == PERF_COUNT_SW_TASK_CLOCK)) {
      return e;
    }
  }
  return std::nullopt;
}

Sideband::Sideband(const format::RecordingFile& reader, const LoadOptions& options, Recording& out,
                   ProcessTable& processes, std::vector<ProfileSample>& samples,
                   BeforeMappingsChange before_mappings_change)
    : reader_(reader),
      options_(options),
      out_(out),
      processes_(processes),
      samples_(samples),
      before_mappings_change_(std::move(before_mappings_change)) {
  const std::vector<EventDesc>& events = reader_.events().events();
  if (HasOffCpuEvents(events)) {
    for (uint32_t e = 0; e < events.size(); ++e) {
      if (events[e].name == kSchedSwitch) off_cpu_source_ = e;
    }
    // After --alloc's four (alloc_events.h), when there are any.
    out_.off_cpu_event = static_cast<uint32_t>(events.size() + (HasAllocEvents(reader_) ? 4 : 0));
  }
}

bool Sideband::ApplyMmap(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto m = ReadRecordHeader(record).type == PERF_RECORD_MMAP ? ParseMmap(record, attr)
                                                                   : ParseMmap2(record, attr);
  if (!m) return false;
  // Only executable mappings matter for symbolization; the others (-d's
  // mappings of data) go to the data layer. Kernel and module maps (pid
  // -1, from perf) are not a process's: kernel addresses are resolved with
  // the kernel's symbols.
  if (m->pid == UINT32_MAX) return true;
  if (m->prot & 0x4 /* PROT_EXEC */) {
    before_mappings_change_(m->pid);
    processes_.ApplyMmap(m->pid, m->addr, m->len, m->pgoff, m->filename);
  } else {
    processes_.ApplyDataMmap(m->pid, m->addr, m->len, m->pgoff, m->filename);
  }
  return true;
}

bool Sideband::ApplyComm(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto c = ParseComm(record, attr);
  if (!c) return false;
  if (c->exec) before_mappings_change_(c->pid);
  processes_.ApplyComm(c->pid, c->tid, c->comm, c->exec);
  return true;
}

bool Sideband::ApplyFork(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto f = ParseTask(record, attr);
  if (!f) return false;
  if (f->pid != f->ppid) before_mappings_change_(f->pid);  // a new process
  processes_.ApplyFork(f->pid, f->ppid, f->tid, f->ptid);
  return true;
}

bool Sideband::ApplyExit(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto e = ParseTask(record, attr);
  if (!e) return false;
  processes_.ApplyExit(e->pid, e->tid);
  intervals_.Exited(e->tid);
  return true;
}

bool Sideband::ApplySwitch(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto s = ParseSwitch(record, attr);
  if (!s) return false;
  if (!off_cpu_source_) return true;
  if (s->out) {
    // Follows the thread's sched:sched_switch sample (the tracepoint fires
    // before the events are switched out).
    if (s->preempted) intervals_.MarkPreempted(s->sample_id.tid);
    return true;
  }
  // The switch-in's sample_id is the task coming back, for both types.
  if (auto interval = intervals_.SwitchedIn(s->sample_id.tid, s->sample_id.time)) {
    samples_[interval->sample].period = interval->blocked;
    if (interval->preempted) samples_[interval->sample].event = *out_.off_cpu_event + 1;
  }
  return true;
}

bool Sideband::ApplyThrottle(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto t = ParseThrottle(record, attr);
  if (!t) return false;
  const bool throttle = ReadRecordHeader(record).type == PERF_RECORD_THROTTLE;
  const uint32_t cpu = t->sample_id.cpu;
  CpuCounts& counts = out_.stats.per_cpu[cpu];
  const auto key = std::make_pair(cpu, t->id);
  if (throttle) {
    ++counts.throttles;
    throttled_since_.try_emplace(key, t->time);
    return true;
  }
  auto it = throttled_since_.find(key);
  if (it == throttled_since_.end()) return true;  // throttled before the records begin
  if (t->time > it->second) counts.throttled_ns += t->time - it->second;
  throttled_since_.erase(it);
  return true;
}

bool Sideband::ApplyLost(std::span<const std::byte> record, const perf_event_attr& attr) {
  if (ReadRecordHeader(record).type == PERF_RECORD_LOST) {
    const auto lost = ParseLost(record, attr);
    if (lost) CountLost(lost->lost, lost->sample_id.cpu);
    return lost.has_value();
  }
  const auto lost = ParseLostSamples(record, attr);
  if (lost) CountLost(lost->lost, lost->sample_id.cpu);
  return lost.has_value();
}

void Sideband::CountLost(uint64_t lost, uint32_t cpu) {
  out_.stats.lost_samples += lost;
  CpuCounts& counts = out_.stats.per_cpu[cpu];
  counts.lost_samples += lost;
  ++counts.lost_records;
}

void Sideband::KeepForScript(const TimedRecord& timed, uint32_t type) {
  const bool is_switch = type == PERF_RECORD_SWITCH || type == PERF_RECORD_SWITCH_CPU_WIDE;
  if (options_.sideband == KeepSideband::kNone ||
      (options_.sideband == KeepSideband::kSwitches && !is_switch)) {
    return;
  }
  const perf_event_attr& attr = reader_.events().events()[timed.event].attr;
  const auto id = ParseSampleIdTrailer(timed.bytes, attr);
  KeptRecord kept;
  kept.time = timed.time;
  kept.event = timed.event;
  if (id) kept.comm = processes_.CommOf(id->pid, id->tid);
  kept.bytes.assign(timed.bytes.begin(), timed.bytes.end());
  out_.sideband.push_back(std::move(kept));
}

void Sideband::OnSample(ProfileSample& sample, size_t index) {
  if (sample.event != off_cpu_source_) return;
  // Weighted by the time off the CPU once the switch-in is seen.
  sample.event = *out_.off_cpu_event;
  sample.period = 0;
  intervals_.SwitchedOut(sample.tid, sample.time, index);
}

void Sideband::Finish(uint64_t last_time) {
  FinishOffCpu();
  out_.off_cpu_source = off_cpu_source_;
  for (const auto& [key, since] : throttled_since_) {
    CpuCounts& counts = out_.stats.per_cpu[key.first];
    if (last_time > since) counts.throttled_ns += last_time - since;
  }
}

void Sideband::FinishOffCpu() {
  if (!out_.off_cpu_event) return;
  const std::vector<size_t> unmatched = intervals_.TakeUnmatched();
  out_.stats.off_cpu = intervals_.stats();
  if (!unmatched.empty()) {
    size_t next = 0, kept = 0;
    for (size_t i = 0; i < samples_.size(); ++i) {
      if (next < unmatched.size() && unmatched[next] == i) {
        ++next;
        continue;
      }
      samples_[kept++] = samples_[i];
    }
    samples_.resize(kept);
  }
  if (options_.wall) AddWallSamples();
}

void Sideband::AddWallSamples() {
  const std::optional<uint32_t> clock = OnCpuClockEvent(reader_.events().events());
  if (!clock) return;
  const uint32_t wall = *out_.off_cpu_event + 2;
  out_.wall_event = wall;
  const size_t count = samples_.size();
  for (size_t i = 0; i < count; ++i) {
    const uint32_t event = samples_[i].event;
    if (event != *clock && event != *out_.off_cpu_event && event != *out_.off_cpu_event + 1) {
      continue;
    }
    ProfileSample copy = samples_[i];
    copy.event = wall;
    copy.reads_count = 0;  // group counts stay with the on-CPU event
    samples_.push_back(copy);
  }
}

}  // namespace sample::report
