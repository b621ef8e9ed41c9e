#include "report/load/recording_loader.h"

#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "formats/recording_file.h"
#include "libsample/model/process_table.h"
#include "libsample/perf/perf_record.h"
#include "report/load/group_reads.h"
#include "report/load/ordered_records.h"
#include "report/load/symbolization.h"
#include "report/load/unresolved_stacks.h"

namespace sample::report {
namespace {

constexpr std::string_view kSchedSwitch = "sched:sched_switch";

// Records the file's chunks claim to hold: a reservation hint for the
// samples (which are most records), so the sample vector is allocated once
// instead of doubling through the load. Chunk headers are untrusted: a
// chunk counts no more records than its payload has headers' room for,
// and the total no more than the file has stored bytes (real recordings
// take several bytes per record even compressed).
size_t ExpectedRecords(const format::RecordingFile& reader) {
  uint64_t records = 0, stored = 0;
  for (const format::ChunkRef& chunk : reader.record_chunks()) {
    records += std::min<uint64_t>(chunk.header.record_count,
                                  chunk.header.raw_size / sizeof(perf_event_header));
    stored += chunk.header.stored_size;
  }
  return static_cast<size_t>(std::min(records, stored));
}

std::vector<ToggleRelation> ToggleRelations(const std::vector<format::ToggleEntry>& entries) {
  std::vector<ToggleRelation> relations;
  for (const format::ToggleEntry& e : entries) {
    relations.push_back({e.trigger, e.target, e.action == format::kToggleOn,
                         e.scope == format::kToggleCpu, e.target_starts_on != 0});
  }
  return relations;
}

// Function ids (innermost first: inlined calls, then the function) and
// symbol offsets of every location, by location id.
struct LocationFunctions {
  std::vector<uint32_t> begin, count, functions;
  std::vector<uint64_t> offsets;  // parallel to functions
  // By location id: its file offset, for locations in mapped files (whose
  // offset is one); FrameAddress::kNoOffset for the kernel, JIT code and
  // unknown addresses (whose offset is the address).
  std::vector<uint64_t> file_offsets;
};

// Loads one recording: records in time order are applied to the process
// table (sideband) or become samples with unresolved stacks (unwound where
// they need it); then every distinct location is symbolized once and the
// samples move into the Profile with function stacks.
class Loader {
 public:
  Loader(const format::RecordingFile& reader, const LoadOptions& options)
      : reader_(reader),
        options_(options),
        group_reads_(reader.events()),
        toggles_(ToggleRelations(reader.toggles()), reader.events().events().size()) {}
  Result<Recording> Run();

 private:
  void ReadRecords(unsigned jobs);
  // Each record type's handler returns false for a malformed record, which
  // Apply counts.
  void Apply(const TimedRecord& record);
  bool ApplySample(std::span<const std::byte> record, const perf_event_attr& attr, uint32_t event);
  bool ApplyMmap2(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplyComm(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplyFork(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplyExit(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplySwitch(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplyThrottle(std::span<const std::byte> record, const perf_event_attr& attr);
  // Off-CPU samples whose thread never came back are dropped; with
  // --wall, the wall pseudo-event's samples are added.
  void FinishOffCpu();
  void CountLost(uint64_t lost, uint32_t cpu);
  // Keeps a well-formed non-sample record for --script when asked to.
  void Keep(const TimedRecord& timed, uint32_t type);
  // Before a record changes `pid`'s mappings: the unwound frames of its
  // queued samples are resolved against the process table when the
  // unwinder calls back, so they must be before the change.
  void BeforeMappingsChange(uint32_t pid);
  void FlushUnwinding();
  // Frees the indexes only loading uses and returns freed heap to the system.
  void ReleaseLoadingState();
  LocationFunctions Symbolize(unsigned jobs);
  void BuildProfile(const LocationFunctions& symbols);
  void WarnOfDamage();
  void DescribeRecording();

  const format::RecordingFile& reader_;
  const LoadOptions& options_;
  Recording out_;
  ProcessTable processes_;
  std::optional<StackUnwinding> unwinding_;
  // Samples' frames refer to stacks_ until symbolization turns them into
  // functions.
  UnresolvedStacks stacks_;
  std::vector<ProfileSample> samples_;
  std::vector<MemberCount> sample_reads_;
  GroupReadDeltas group_reads_;
  ToggleWindows toggles_;
  // Off-CPU recordings: the sched:sched_switch event whose samples become
  // the off-cpu pseudo-event's (out_.off_cpu_event), paired by intervals_.
  std::optional<uint32_t> off_cpu_source_;
  uint32_t host_max_stack_ = 127;  // kernel.perf_event_max_stack when recorded
  OffCpuIntervals intervals_;
  // Throttled events by (CPU, event id): since when.
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> throttled_since_;
};

Result<Recording> Loader::Run() {
  const unsigned jobs =
      options_.jobs != 0 ? options_.jobs : std::max(1u, std::thread::hardware_concurrency());
  ReadRecords(jobs);
  // Symbolization opens DWARF (libc's debug file alone inflates to ~10 MB):
  // give back what only loading needed (decoded chunks, the unwinders'
  // state, the lookup indexes) first, so the two peaks do not add up.
  ReleaseLoadingState();
  BuildProfile(Symbolize(jobs));
  DescribeRecording();
  WarnOfDamage();
  return std::move(out_);
}

// What --stats counts, said once in every view: a report built from a
// damaged file must not look like a complete one.
void Loader::WarnOfDamage() {
  const LoadStats& s = out_.stats;
  if (s.malformed_records != 0 || s.unknown_event_records != 0) {
    out_.warnings.push_back(fmt::format(
        "{}: {} malformed record(s) and {} of unknown events were skipped (--stats counts them)",
        reader_.path(), s.malformed_records, s.unknown_event_records));
  }
  if (s.samples == 0 && s.malformed_samples != 0) {
    out_.warnings.push_back(fmt::format(
        "{}: no sample could be read: every one of the {} sample records was malformed", reader_.path(),
        s.malformed_samples));
  }
  if (s.saturated_periods != 0) {
    out_.warnings.push_back(fmt::format(
        "{}: the periods of {} sample(s) would have summed past 2^64 and were cut to fit: the "
        "event counts and shares are not exact",
        reader_.path(), s.saturated_periods));
  }
}

void Loader::ReadRecords(unsigned jobs) {
  StackUnwindingOptions unwind_options;
  unwind_options.jobs = jobs;
  const auto machine = format::FindMetadata(reader_.metadata(), "arch");
  unwind_options.arch = machine ? ArchFromMachine(*machine) : HostArch();
  unwind_options.binaries = options_.binaries;
  unwind_options.binaries.vdso_image = reader_.vdso_image();
  unwinding_.emplace(unwind_options, processes_, reader_.build_ids());
  const std::vector<EventDesc>& events = reader_.events().events();
  if (HasOffCpuEvents(events)) {
    for (uint32_t e = 0; e < events.size(); ++e) {
      if (events[e].name == kSchedSwitch) off_cpu_source_ = e;
    }
    out_.off_cpu_event = static_cast<uint32_t>(events.size());
  }
  samples_.reserve(ExpectedRecords(reader_));
  if (const auto limit = format::FindMetadata(reader_.metadata(), "perf_event_max_stack")) {
    uint32_t value = 0;
    const auto [end, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), value);
    if (ec == std::errc() && end == limit->data() + limit->size() && value != 0) {
      host_max_stack_ = value;
    }
  }
  OrderedRecordStream stream(reader_, jobs);
  for (auto batch = stream.NextBatch(); !batch.empty(); batch = stream.NextBatch()) {
    // Records without a time (perf's synthesized ones) do not start the
    // recording; the rest come in time order.
    for (size_t i = 0; out_.stats.first_time == 0 && i < batch.size(); ++i) {
      out_.stats.first_time = batch[i].time;
    }
    out_.stats.last_time = std::max(out_.stats.last_time, batch.back().time);
    for (const TimedRecord& record : batch) Apply(record);
    FlushUnwinding();  // the batch's bytes go away with the next one
  }
  FinishOffCpu();
  out_.off_cpu_source = off_cpu_source_;
  for (const auto& [key, since] : throttled_since_) {
    CpuCounts& counts = out_.stats.per_cpu[key.first];
    if (out_.stats.last_time > since) counts.throttled_ns += out_.stats.last_time - since;
  }
  out_.stats.unwind = unwinding_->stats();
  out_.warnings.insert(out_.warnings.end(), unwinding_->warnings().begin(),
                       unwinding_->warnings().end());
  unwinding_.reset();
  const RecordStreamStats& stream_stats = stream.stats();
  out_.stats.bad_chunks += stream_stats.bad_chunks;
  out_.stats.malformed_records += stream_stats.malformed_chunks;
  out_.stats.unknown_event_records += stream_stats.unknown_event_records;
  out_.warnings.insert(out_.warnings.end(), stream_stats.warnings.begin(),
                       stream_stats.warnings.end());
}

// Each distinct stack of frames becomes a Profile stack once; samples are
// rewritten in place and moved into the Profile.
void Loader::BuildProfile(const LocationFunctions& symbols) {
  std::vector<uint32_t> frames;
  std::vector<FrameAddress> addresses;
  std::unordered_map<uint32_t, Profile::StackRef> stack_of;  // by frame stack begin
  // Each event's periods sum to at most 2^64 - 1: every sum taken later (an
  // entry's, a section's, a diff's) is of a subset and cannot wrap into a
  // share of 472690664751%.
  std::vector<uint64_t> period_sums;
  for (ProfileSample& s : samples_) {
    if (s.event >= period_sums.size()) period_sums.resize(s.event + 1, 0);
    uint64_t& sum = period_sums[s.event];
    if (s.period > UINT64_MAX - sum) {
      s.period = UINT64_MAX - sum;
      ++out_.stats.saturated_periods;
    }
    sum += s.period;
    auto [it, inserted] = stack_of.try_emplace(s.frames_begin);
    if (inserted) {
      frames.clear();
      addresses.clear();
      for (uint32_t id : stacks_.Frames({s.frames_begin, s.frames_count})) {
        const SeenFrame& frame = stacks_.frame(id);
        const uint32_t begin = symbols.begin[frame.location];
        for (uint32_t i = begin; i < begin + symbols.count[frame.location]; ++i) {
          frames.push_back(symbols.functions[i]);
          FrameAddress address{frame.ip, symbols.offsets[i], symbols.file_offsets[frame.location]};
          // The function was found at ip - 1 for a return address; the
          // offsets kept are the ip's own, as perf script prints them.
          if (frame.return_address) {
            if (address.symbol_offset != FrameAddress::kNoOffset) ++address.symbol_offset;
            if (address.file_offset != FrameAddress::kNoOffset) ++address.file_offset;
          }
          addresses.push_back(address);
        }
      }
      it->second = out_.profile.InternStack(frames, addresses);
    }
    s.frames_begin = it->second.begin;
    s.frames_count = it->second.count;
  }
  out_.profile.AddSamples(std::move(samples_), std::move(sample_reads_));
  for (uint32_t leader = 0; leader < group_reads_.leaders(); ++leader) {
    const std::vector<uint32_t> members = group_reads_.MembersOf(leader);
    if (!members.empty()) out_.profile.set_group_members(leader, members);
  }
}

void Loader::DescribeRecording() {
  std::vector<std::string> dso_names;
  for (size_t i = 0; i < processes_.dso_count(); ++i) {
    dso_names.push_back(processes_.DsoPath(static_cast<uint32_t>(i)));
  }
  out_.profile.set_dso_names(std::move(dso_names));
  std::vector<std::string> event_names;
  const EventTable& events = reader_.events();
  for (const EventDesc& e : events.events()) event_names.push_back(e.name);
  if (out_.off_cpu_event) {
    event_names.push_back("off-cpu");
    event_names.push_back("off-cpu-preempted");
  }
  if (out_.wall_event) event_names.push_back("wall");
  out_.profile.set_event_names(std::move(event_names));
  out_.metadata = reader_.metadata();
  out_.build_ids = reader_.build_ids();
  out_.events = events.events();
  out_.callchains = std::ranges::any_of(out_.events, [](const EventDesc& e) {
    return (e.attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) != 0;
  });
  out_.trailer = reader_.trailer();
  out_.counts = reader_.counts();
  out_.toggles = toggles_.relations();
  out_.toggle_stats = toggles_.stats();
  out_.toggles_applied = options_.apply_toggles && toggles_.active();
  out_.control = reader_.control();
  if (!reader_.trace_formats().empty()) {
    out_.tracepoints.resize(out_.events.size());
    for (const format::TraceFormatEntry& entry : reader_.trace_formats()) {
      if (entry.event_index >= out_.tracepoints.size()) {
        out_.warnings.push_back(fmt::format("{}: a trace format names event {}, of {}",
                                            reader_.path(), entry.event_index,
                                            out_.tracepoints.size()));
        continue;
      }
      TracepointDesc& desc = out_.tracepoints[entry.event_index];
      desc.filter = entry.filter;
      if (entry.format.empty()) continue;  // tracefs did not give it at record time
      auto parsed = ParseTraceFormat(entry.format);
      if (!parsed) {
        out_.warnings.push_back(fmt::format("{}: the trace format of '{}' is unusable: {}",
                                            reader_.path(), out_.events[entry.event_index].name,
                                            parsed.error().message));
        continue;
      }
      desc.format = std::move(*parsed);
    }
  }
  out_.format_name = reader_.format_name();
  out_.stats.other_records = reader_.other_records();
  out_.finalized = reader_.finalized();
  out_.file_size = reader_.file_size();
  out_.valid_end = reader_.valid_end();
}

void Loader::Apply(const TimedRecord& timed) {
  const std::span<const std::byte> record = timed.bytes;
  const perf_event_attr& attr = reader_.events().events()[timed.event].attr;
  const perf_event_header header = ReadRecordHeader(record);
  ++out_.stats.records;
  if (header.type < out_.stats.records_by_type.size()) ++out_.stats.records_by_type[header.type];
  bool ok = true;
  switch (header.type) {
    case PERF_RECORD_SAMPLE:
      ok = ApplySample(record, attr, timed.event);
      break;
    case PERF_RECORD_MMAP2:
    case PERF_RECORD_MMAP:
      ok = ApplyMmap2(record, attr);
      break;
    case PERF_RECORD_COMM:
      ok = ApplyComm(record, attr);
      break;
    case PERF_RECORD_FORK:
      ok = ApplyFork(record, attr);
      break;
    case PERF_RECORD_EXIT:
      ok = ApplyExit(record, attr);
      break;
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE:
      ok = ApplySwitch(record, attr);
      break;
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
      ok = ApplyThrottle(record, attr);
      break;
    case PERF_RECORD_LOST: {
      const auto lost = ParseLost(record, attr);
      if (lost) CountLost(lost->lost, lost->sample_id.cpu);
      ok = lost.has_value();
      break;
    }
    case PERF_RECORD_LOST_SAMPLES: {
      const auto lost = ParseLostSamples(record, attr);
      if (lost) CountLost(lost->lost, lost->sample_id.cpu);
      ok = lost.has_value();
      break;
    }
    default:
      break;
  }
  if (!ok) {
    ++out_.stats.malformed_records;
    out_.stats.malformed_samples += header.type == PERF_RECORD_SAMPLE;
    return;
  }
  if (header.type != PERF_RECORD_SAMPLE) Keep(timed, header.type);
}

void Loader::Keep(const TimedRecord& timed, uint32_t type) {
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

bool Loader::ApplyMmap2(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto m = ReadRecordHeader(record).type == PERF_RECORD_MMAP ? ParseMmap(record, attr)
                                                                   : ParseMmap2(record, attr);
  if (!m) return false;
  // Only executable mappings matter for symbolization. Kernel and module
  // maps (pid -1, from perf) are not a process's: kernel addresses are
  // resolved with the kernel's symbols.
  if ((m->prot & 0x4 /* PROT_EXEC */) && m->pid != UINT32_MAX) {
    BeforeMappingsChange(m->pid);
    processes_.ApplyMmap(m->pid, m->addr, m->len, m->pgoff, m->filename);
  }
  return true;
}

bool Loader::ApplyComm(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto c = ParseComm(record, attr);
  if (!c) return false;
  if (c->exec) BeforeMappingsChange(c->pid);
  processes_.ApplyComm(c->pid, c->tid, c->comm, c->exec);
  return true;
}

bool Loader::ApplyFork(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto f = ParseTask(record, attr);
  if (!f) return false;
  if (f->pid != f->ppid) BeforeMappingsChange(f->pid);  // a new process
  processes_.ApplyFork(f->pid, f->ppid, f->tid, f->ptid);
  return true;
}

bool Loader::ApplyExit(std::span<const std::byte> record, const perf_event_attr& attr) {
  const auto e = ParseTask(record, attr);
  if (!e) return false;
  processes_.ApplyExit(e->pid, e->tid);
  intervals_.Exited(e->tid);
  return true;
}

bool Loader::ApplySwitch(std::span<const std::byte> record, const perf_event_attr& attr) {
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

bool Loader::ApplyThrottle(std::span<const std::byte> record, const perf_event_attr& attr) {
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

void Loader::FinishOffCpu() {
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
  if (!options_.wall) return;
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

void Loader::CountLost(uint64_t lost, uint32_t cpu) {
  out_.stats.lost_samples += lost;
  CpuCounts& counts = out_.stats.per_cpu[cpu];
  counts.lost_samples += lost;
  ++counts.lost_records;
}

void Loader::BeforeMappingsChange(uint32_t pid) {
  if (unwinding_->HasQueuedFor(pid)) FlushUnwinding();
}

void Loader::ReleaseLoadingState() {
  stacks_.ReleaseIndexes();
  group_reads_.ReleaseTotals();
  // glibc keeps freed chunks (the decoded payloads are megabytes each) in
  // its arenas; without a trim they would still count in the peak RSS.
  malloc_trim(0);
}

void Loader::FlushUnwinding() {
  unwinding_->Flush([this](size_t index, std::span<const uint64_t> chain) {
    ProfileSample& sample = samples_[index];
    const U64List list(reinterpret_cast<const std::byte*>(chain.data()), chain.size());
    const UnresolvedStacks::StackRef stack = stacks_.StackOf(processes_, sample.pid, 0, list);
    sample.frames_begin = stack.begin;
    sample.frames_count = stack.count;
    out_.stats.frames += stack.count;
  });
}

bool Loader::ApplySample(std::span<const std::byte> record, const perf_event_attr& attr,
                         uint32_t event) {
  const auto s = ParseSample(record, attr);
  if (!s) return false;
  ++out_.stats.samples;
  ++out_.stats.per_cpu[s->cpu].samples;
  bool cut = false;
  if (!s->callchain.empty()) {
    // The kernel stores at most the limit's worth of frames, context
    // markers aside: a chain that long was cut.
    const uint32_t limit = attr.sample_max_stack != 0 ? attr.sample_max_stack : host_max_stack_;
    size_t frames = 0;
    for (size_t i = 0; i < s->callchain.size(); ++i) frames += !IsContextMarker(s->callchain[i]);
    if (frames >= limit) {
      cut = true;
      ++out_.stats.cut_chains;
      out_.stats.chain_limit = std::max(out_.stats.chain_limit, limit);
    }
  }
  if (toggles_.active()) {
    // In time order: a trigger switches before the samples after it.
    toggles_.Trigger(event, s->tid, s->cpu);
    if (!toggles_.Inside(event, s->tid, s->cpu) && options_.apply_toggles) return true;
  }
  ProfileSample sample;
  sample.event = event;
  sample.comm = out_.profile.InternComm(processes_.CommOf(s->pid, s->tid));
  sample.pid = s->pid;
  sample.tid = s->tid;
  sample.cpu = s->cpu;
  sample.time = s->time;
  sample.period = s->period;
  if (event == off_cpu_source_) {
    // Weighted by the time off the CPU once the switch-in is seen.
    sample.event = *out_.off_cpu_event;
    sample.period = 0;
    intervals_.SwitchedOut(s->tid, s->time, samples_.size());
  }
  sample.reads_begin = static_cast<uint32_t>(sample_reads_.size());
  out_.stats.unknown_group_reads += group_reads_.Add(*s, event, sample_reads_);
  sample.reads_count = static_cast<uint32_t>(sample_reads_.size() - sample.reads_begin);
  // Unwound samples get their stack when the unwinding stage flushes.
  if (!options_.unwind || !unwinding_->Queue(samples_.size(), *s, attr, cut)) {
    const UnresolvedStacks::StackRef stack =
        stacks_.StackOf(processes_, s->pid, s->ip, s->callchain);
    sample.frames_begin = stack.begin;
    sample.frames_count = stack.count;
    out_.stats.frames += sample.frames_count;
  }
  if (!s->raw.empty()) out_.profile.AddRaw(samples_.size(), s->raw);
  samples_.push_back(sample);
  return true;
}

LocationFunctions Loader::Symbolize(unsigned jobs) {
  const std::vector<Location>& locations = stacks_.locations();
  // Samples per distinct stack, then frames per stack: unknown frames are
  // counted as perf does (per sample), without walking every sample's frames.
  std::unordered_map<uint32_t, std::pair<uint32_t, uint64_t>> stack_samples;  // begin -> (count, n)
  for (const ProfileSample& s : samples_) {
    auto& [count, n] = stack_samples[s.frames_begin];
    count = s.frames_count;
    ++n;
  }
  std::vector<uint64_t> uses(locations.size(), 0);
  for (const auto& [begin, stack] : stack_samples) {
    for (uint32_t id : stacks_.Frames({begin, stack.first})) {
      uses[stacks_.frame(id).location] += stack.second;
    }
  }
  std::vector<std::string> dso_paths;
  for (size_t i = 0; i < processes_.dso_count(); ++i) {
    dso_paths.push_back(processes_.DsoPath(static_cast<uint32_t>(i)));
  }
  SymbolizeOptions options;
  options.jobs = jobs;
  options.binaries = options_.binaries;
  options.binaries.vdso_image = reader_.vdso_image();
  options.srclines = options_.srclines;
  options.show_progress = options_.show_progress;
  if (reader_.format_name() != "sample.data") options.kernel_symbols_origin = "kallsyms";
  options.names = options_.symbolize;
  SymbolizeResult result = SymbolizeLocations(locations, dso_paths, reader_.build_ids(),
                                              reader_.kernel_symbols(), options);
  out_.stats.mismatched_binaries += result.mismatched_binaries;
  out_.stats.missing_binaries += result.missing_binaries;
  out_.stats.symbol_sources = std::move(result.symbol_sources);
  out_.warnings.insert(out_.warnings.end(), result.warnings.begin(), result.warnings.end());

  LocationFunctions out;
  out.begin = std::move(result.frames_begin);
  out.count = std::move(result.frames_count);
  out.functions.reserve(result.frames.size());
  out.offsets.reserve(result.frames.size());
  out.file_offsets.reserve(locations.size());
  for (size_t i = 0; i < locations.size(); ++i) {
    const Location& loc = locations[i];
    const bool kernel = loc.dso == ProcessTable::kKernelDso;
    const bool in_file =
        !kernel && loc.dso != ProcessTable::kUnknownDso && !IsPerfMapPath(dso_paths[loc.dso]);
    out.file_offsets.push_back(in_file ? loc.offset : FrameAddress::kNoOffset);
    for (uint32_t f = out.begin[i]; f < out.begin[i] + out.count[i]; ++f) {
      const ResolvedFrame& frame = result.frames[f];
      if (!frame.known) out_.stats.unknown_frames += uses[i];
      out.functions.push_back(out_.profile.InternFunction(loc.dso, frame.name, kernel, frame.known,
                                                          frame.inlined, frame.srcline));
      out.offsets.push_back(frame.symbol_offset);
    }
  }
  return out;
}

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

Result<Recording> LoadRecording(const std::string& path, const LoadOptions& options) {
  TRY_ASSIGN(auto reader, format::OpenRecording(path));
  Loader loader(*reader, options);
  auto recording = loader.Run();
  if (recording) {
    recording->warnings.insert(recording->warnings.begin(), reader->warnings().begin(),
                               reader->warnings().end());
  }
  return recording;
}

}  // namespace sample::report
