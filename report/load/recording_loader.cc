#include "report/load/recording_loader.h"

#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <thread>
#include <unordered_map>

#include "formats/recording_file.h"
#include "formats/recording_set.h"
#include "libsample/model/process_table.h"
#include "libsample/perf/perf_record.h"
#include "report/load/data_addresses.h"
#include "report/load/group_reads.h"
#include "report/load/jit_timeline.h"
#include "report/load/loader.h"
#include "report/load/ordered_records.h"
#include "report/load/profile_building.h"
#include "report/load/sample_merging.h"
#include "report/load/sideband.h"
#include "report/load/unresolved_stacks.h"

namespace sample::report {
namespace {

// A chain's leaf: its first address and the context marker before it.
// (For a precise event the kernel's chain starts at the interrupted ip, the
// sample's ip at the precise one.)
U64List LeafOfChain(const U64List& chain) {
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i] < static_cast<uint64_t>(PERF_CONTEXT_MAX)) {
      return U64List(chain.bytes().data(), i + 1);
    }
  }
  return U64List{};
}

std::vector<ToggleRelation> ToggleRelations(const std::vector<format::ToggleEntry>& entries) {
  std::vector<ToggleRelation> relations;
  for (const format::ToggleEntry& e : entries) {
    relations.push_back({e.trigger, e.target, e.action == format::kToggleOn,
                         e.scope == format::kToggleCpu, e.target_starts_on != 0});
  }
  return relations;
}

}  // namespace

// Chunk headers are untrusted: a chunk counts no more records than its
// payload has headers' room for, and the total no more than the file has
// stored bytes (real recordings take several bytes per record even
// compressed).
size_t ExpectedRecords(const format::RecordingFile& reader) {
  uint64_t records = 0, stored = 0;
  for (const format::ChunkRef& chunk : reader.record_chunks()) {
    records += std::min<uint64_t>(chunk.header.record_count,
                                  chunk.header.raw_size / sizeof(perf_event_header));
    stored += chunk.header.stored_size;
  }
  return static_cast<size_t>(std::min(records, stored));
}

Loader::Loader(const format::RecordingFile& reader, const LoadOptions& options)
    : reader_(reader),
      options_(options),
      recorded_{reader.vdso_image(), &reader.embedded_binaries()},
      group_reads_(reader.events()),
      toggles_(ToggleRelations(reader.toggles()), reader.events().events().size()),
      sideband_(reader, options, out_, processes_, samples_,
                [this](uint32_t pid) { BeforeMappingsChange(pid); }),
      alloc_(AllocEvents::Of(reader, out_.alloc_event)),
      naming_(reader, options, recorded_) {}

Result<Recording> Loader::Run() {
  const unsigned jobs =
      options_.jobs != 0 ? options_.jobs : std::max(1u, std::thread::hardware_concurrency());
  ReadRecords(jobs);
  // Symbolization opens DWARF (libc's debug file alone inflates to ~10 MB):
  // give back what only loading needed (decoded chunks, the unwinders'
  // state, the lookup indexes) first, so the two peaks do not add up.
  ReleaseLoadingState();
  // Before the samples move.
  const LocationFunctions symbols = naming_.NameAll(stacks_, samples_, processes_, jobs, out_);
  data_.Resolve(processes_, options_.binaries, recorded_, reader_.build_ids(), out_.profile);
  out_.profile.ChooseNames(options_.full_signatures);
  BuildProfile(symbols, stacks_, std::move(samples_), std::move(sample_reads_), group_reads_, out_);
  out_.profile.ExtendTimeRange(merging_.last_time());
  DescribeRecording(reader_, processes_, toggles_, options_.apply_toggles, out_);
  WarnOfDamage(reader_.path(), out_);
  return std::move(out_);
}

void Loader::ReadRecords(unsigned jobs) {
  StartReading(jobs);
  // Samples paired later by their place in samples_ stay apart.
  if (options_.merge_samples && !alloc_ && !out_.off_cpu_event && !options_.wall &&
      options_.sideband == KeepSideband::kNone) {
    merging_.Start(/*memo=*/!options_.chains && !options_.unwind && !toggles_.active());
  }
  // Merged, they take the room of distinct samples, which grows as needed.
  const size_t expected = ExpectedRecords(reader_);
  samples_.reserve(merging_.on() ? std::min<size_t>(expected, size_t{1} << 16) : expected);
  ApplyChunks(jobs);
  FinishReading();
}

void Loader::StartReading(unsigned jobs) {
  StackUnwindingOptions unwind_options;
  unwind_options.jobs = jobs;
  const auto machine = format::FindMetadata(reader_.metadata(), "arch");
  unwind_options.arch = machine ? ArchFromMachine(*machine) : HostArch();
  unwind_options.binaries = options_.binaries;
  unwind_options.recorded = recorded_;
  unwinding_.emplace(unwind_options, processes_, reader_.build_ids());
  jit_.emplace(reader_.jit_dumps(), processes_);
  if (const auto limit = format::FindMetadata(reader_.metadata(), "perf_event_max_stack")) {
    uint32_t value = 0;
    const auto [end, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), value);
    if (ec == std::errc() && end == limit->data() + limit->size() && value != 0) {
      host_max_stack_ = value;
    }
  }
}

void Loader::ApplyChunks(unsigned jobs) {
  OrderedRecordStream stream(reader_, jobs, &payload_pool_);
  for (auto batch = stream.NextBatch(); !batch.empty(); batch = stream.NextBatch()) {
    // Records without a time (perf's synthesized ones) do not start the
    // recording; the rest come in time order.
    for (size_t i = 0; out_.stats.first_time == 0 && i < batch.size(); ++i) {
      out_.stats.first_time = batch[i].time;
    }
    out_.stats.last_time = std::max(out_.stats.last_time, batch.back().time);
    for (const TimedRecord& record : batch) Apply(record);
    FlushUnwinding();  // the batch's bytes go away with the next one
    if (merging_.on()) merging_.MergeBatch(samples_, out_.stats.saturated_periods);
  }
  const RecordStreamStats& stream_stats = stream.stats();
  out_.stats.bad_chunks += stream_stats.bad_chunks;
  out_.stats.malformed_records += stream_stats.malformed_chunks;
  out_.stats.unknown_event_records += stream_stats.unknown_event_records;
  out_.warnings.insert(out_.warnings.end(), stream_stats.warnings.begin(),
                       stream_stats.warnings.end());
}

void Loader::FinishReading() {
  // Before the off-CPU samples go: the calls are named by sample index.
  if (alloc_) alloc_->Finish(samples_, out_.stats.alloc);
  sideband_.Finish(out_.stats.last_time);
  if (alloc_) {
    std::erase_if(samples_,
                  [](const ProfileSample& s) { return s.event == AllocEvents::kDroppedEvent; });
  }
  out_.stats.jitdump = jit_->stats();
  out_.jit_code = jit_->code();
  out_.embedded = reader_.embedded_binaries();
  out_.warnings.insert(out_.warnings.end(), jit_->warnings().begin(), jit_->warnings().end());
  out_.stats.unwind = unwinding_->stats();
  out_.warnings.insert(out_.warnings.end(), unwinding_->warnings().begin(),
                       unwinding_->warnings().end());
  unwinding_.reset();
}

void Loader::Apply(const TimedRecord& timed) {
  const std::span<const std::byte> record = timed.bytes;
  const perf_event_attr& attr = reader_.events().events()[timed.event].attr;
  const perf_event_header header = ReadRecordHeader(record);
  if (jit_->Due(timed.time)) {
    jit_->ApplyUntil(timed.time, processes_, [this](uint32_t pid) { BeforeMappingsChange(pid); });
  }
  ++out_.stats.records;
  if (header.type < out_.stats.records_by_type.size()) ++out_.stats.records_by_type[header.type];
  const bool ok = header.type == PERF_RECORD_SAMPLE ? ApplySample(record, attr, timed.event)
                                                    : ApplySideband(header.type, record, attr);
  if (!ok) {
    ++out_.stats.malformed_records;
    out_.stats.malformed_samples += header.type == PERF_RECORD_SAMPLE;
    return;
  }
  if (header.type != PERF_RECORD_SAMPLE) sideband_.KeepForScript(timed, header.type);
}

bool Loader::ApplySideband(uint32_t type, std::span<const std::byte> record,
                           const perf_event_attr& attr) {
  switch (type) {
    case PERF_RECORD_MMAP2:
    case PERF_RECORD_MMAP:
      return sideband_.ApplyMmap(record, attr);
    case PERF_RECORD_COMM:
      return sideband_.ApplyComm(record, attr);
    case PERF_RECORD_FORK:
      return sideband_.ApplyFork(record, attr);
    case PERF_RECORD_EXIT:
      if (const auto task = ParseTask(record, attr); task && alloc_) alloc_->Exited(task->tid);
      return sideband_.ApplyExit(record, attr);
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE:
      return sideband_.ApplySwitch(record, attr);
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
      return sideband_.ApplyThrottle(record, attr);
    case PERF_RECORD_LOST:
    case PERF_RECORD_LOST_SAMPLES:
      return sideband_.ApplyLost(record, attr);
    default:
      return true;
  }
}

void Loader::BeforeMappingsChange(uint32_t pid) {
  if (unwinding_->HasQueuedFor(pid)) FlushUnwinding();
}

void Loader::ReleaseLoadingState() {
  merging_.Release();
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
    out_.stats.junk_callers += stacks_.last_chain_ended() ? sample.samples : 0;
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
  if (last_cpu_counts_ == nullptr || s->cpu != last_cpu_) {
    last_cpu_ = s->cpu;
    last_cpu_counts_ = &out_.stats.per_cpu[s->cpu];
  }
  ++last_cpu_counts_->samples;
  // A sample like one seen lately joins its entry now (LeafMemo): its
  // comm, stack and merge key would be that one's.
  std::optional<LeafMemo::Key> memo_key;
  if (merging_.memo_on() && (attr.sample_type & (PERF_SAMPLE_READ | PERF_SAMPLE_ADDR)) == 0) {
    memo_key = LeafMemo::Key{s->ip,
                             s->pid,
                             s->tid,
                             s->cpu,
                             event,
                             processes_.last_mappings_version(),
                             processes_.comms_version()};
    if (merging_.JoinRecent(*memo_key, s->period, s->time, samples_,
                            out_.stats.saturated_periods, out_.stats.frames)) {
      return true;
    }
  }
  // A view without chains (--annotate) has no cut ones to say.
  const bool cut = options_.chains && ChainWasCut(*s, attr);
  if (toggles_.active()) {
    // In time order: a trigger switches before the samples after it.
    toggles_.Trigger(event, s->tid, s->cpu);
    if (!toggles_.Inside(event, s->tid, s->cpu) && options_.apply_toggles) return true;
  }
  ProfileSample sample;
  sample.event = event;
  sample.comm = comm_ids_.Of(s->pid, s->tid, processes_, out_.profile);
  sample.pid = s->pid;
  sample.tid = s->tid;
  sample.cpu = s->cpu;
  sample.time = s->time;
  sample.period = s->period;
  if (attr.sample_type & PERF_SAMPLE_ADDR) sample.data = data_.Locate(processes_, s->pid, s->addr);
  sideband_.OnSample(sample, samples_.size());
  if (alloc_ && !alloc_->Keep(sample, samples_.size(), *s, attr, samples_)) return true;
  sample.reads_begin = static_cast<uint32_t>(sample_reads_.size());
  out_.stats.unknown_group_reads += group_reads_.Add(*s, event, sample_reads_);
  sample.reads_count = static_cast<uint32_t>(sample_reads_.size() - sample.reads_begin);
  // Unwound samples get their stack when the unwinding stage flushes.
  if (!options_.unwind || !unwinding_->Queue(samples_.size(), *s, attr, cut)) {
    const UnresolvedStacks::StackRef stack = stacks_.StackOf(
        processes_, s->pid, s->ip,
        options_.chains       ? s->callchain
        : options_.chain_leaf ? LeafOfChain(s->callchain)
                              : U64List{});
    out_.stats.junk_callers += stacks_.last_chain_ended();
    sample.frames_begin = stack.begin;
    sample.frames_count = stack.count;
    out_.stats.frames += sample.frames_count;
  }
  // Only --script reads raw payloads, and it does not merge.
  if (!s->raw.empty() && sample.event != out_.alloc_event && !merging_.on()) {
    out_.profile.AddRaw(samples_.size(), s->raw);
  }
  samples_.push_back(sample);
  if (memo_key) merging_.Remember(*memo_key, samples_.size() - 1);
  return true;
}

bool Loader::ChainWasCut(const SampleRecord& sample, const perf_event_attr& attr) {
  if (sample.callchain.empty()) return false;
  const uint32_t limit = ChainFrameLimit(attr, host_max_stack_);
  if (!ChainAtFrameLimit(sample.callchain, limit)) return false;
  ++out_.stats.cut_chains;
  out_.stats.chain_limit = std::max(out_.stats.chain_limit, limit);
  return true;
}

Result<Recording> LoadRecording(const std::string& path, const LoadOptions& options) {
  std::vector<std::string> paths = {path};
  paths.insert(paths.end(), options.more_inputs.begin(), options.more_inputs.end());
  TRY_ASSIGN(auto reader, format::OpenRecordings(paths));
  Loader loader(*reader, options);
  auto recording = loader.Run();
  if (recording) {
    recording->warnings.insert(recording->warnings.begin(), reader->warnings().begin(),
                               reader->warnings().end());
  }
  return recording;
}

}  // namespace sample::report
