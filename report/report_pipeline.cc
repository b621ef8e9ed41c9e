#include "report/report_pipeline.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "formats/sample_file_reader.h"
#include "libsample/model/process_table.h"
#include "libsample/model/sequence_interner.h"
#include "libsample/perf/perf_record.h"
#include "report/ordered_records.h"
#include "report/symbolization.h"

namespace sample::report {
namespace {

// Executable memory with no file behind it, where JITs put code.
bool IsAnonymousCode(const std::string& path) {
  return path == "//anon" || path.starts_with("[anon") || path.starts_with("/memfd:");
}

struct LocationHash {
  size_t operator()(const Location& l) const {
    return std::hash<uint64_t>()(l.offset * 0x9E3779B97F4A7C15ull ^ l.dso);
  }
};

// One frame as a sample saw it: where it resolved and the address the
// kernel reported (a return address for callers). Distinct frames are few
// (about the distinct ips), so samples hold stacks of frame ids.
struct SeenFrame {
  uint32_t location;
  bool return_address;
  uint64_t ip;
  bool operator==(const SeenFrame&) const = default;
};

struct SeenFrameHash {
  size_t operator()(const SeenFrame& f) const {
    return std::hash<uint64_t>()((f.ip * 0x9E3779B97F4A7C15ull) ^ f.location ^
                                 (uint64_t(f.return_address) << 63));
  }
};

// Records the file's chunks claim to hold: a reservation hint for the
// samples (which are most records), so the sample vector is allocated once
// instead of doubling through the load. Chunk headers are untrusted: a
// chunk counts no more records than its payload has headers' room for,
// and the total no more than the file has stored bytes (real recordings
// take several bytes per record even compressed).
size_t ExpectedRecords(const format::SampleFileReader& reader) {
  uint64_t records = 0, stored = 0;
  for (const format::ChunkRef& chunk : reader.record_chunks()) {
    records += std::min<uint64_t>(chunk.header.record_count,
                                  chunk.header.raw_size / sizeof(perf_event_header));
    stored += chunk.header.stored_size;
  }
  return static_cast<size_t>(std::min(records, stored));
}

class Loader {
 public:
  Loader(const format::SampleFileReader& reader, const LoadOptions& options)
      : reader_(reader), options_(options) {}
  Result<Recording> Run();

 private:
  void Apply(const TimedRecord& record);
  void AddSample(const SampleRecord& sample, uint32_t event, const perf_event_attr& attr);
  // Before a record changes `pid`'s mappings: unwinds its queued samples
  // against the old ones, then drops what was kept of them.
  void MappingsChanging(uint32_t pid);
  void FlushUnwinding();
  // Frees the indexes only loading uses and returns freed heap to the system.
  void ReleaseLoadingState();
  uint32_t LocationId(uint32_t pid, uint64_t ip, bool return_address);
  uint32_t FrameId(uint32_t pid, uint64_t ip, bool return_address);
  // The stack of a call chain (with context markers) or, if it is empty, of
  // the ip alone.
  SequenceInterner::Ref StackOf(uint32_t pid, uint64_t ip, const U64List& callchain);
  void AddGroupReads(const SampleRecord& sample, uint32_t event, ProfileSample& header);
  // Function ids (innermost first: inlined calls, then the function) and
  // symbol offsets of every location.
  struct LocationFunctions {
    std::vector<uint32_t> begin, count, functions;
    std::vector<uint64_t> offsets;  // parallel to functions
  };
  LocationFunctions Symbolize(unsigned jobs);

  const format::SampleFileReader& reader_;
  const LoadOptions& options_;
  Recording out_;
  ProcessTable processes_;
  std::optional<StackUnwinding> unwinding_;
  std::vector<Location> locations_;
  std::unordered_map<Location, uint32_t, LocationHash> location_ids_;
  std::vector<SeenFrame> frames_;
  std::unordered_map<SeenFrame, uint32_t, SeenFrameHash> frame_ids_;
  // Samples' frames refer to frame_stacks_ (stacks of frame ids) until
  // symbolization turns them into functions.
  std::vector<ProfileSample> samples_;
  SequenceInterner frame_stacks_;
  std::vector<uint32_t> scratch_;
  // Stacks of the raw call chains seen, per process: one hash of the chain
  // instead of a location and a frame lookup per frame (measured: those
  // were the loader's largest cost). A process's entries are dropped when
  // its mappings change (MMAP2, exec), since the same ips may then resolve
  // elsewhere.
  struct CachedChain {
    std::vector<std::byte> chain;
    SequenceInterner::Ref stack;
  };
  std::unordered_map<uint32_t, std::unordered_map<uint64_t, CachedChain>> chain_cache_;
  std::vector<MemberCount> sample_reads_;
  // Group reads carry running totals per fd (id); members get the increase
  // since the previous read of the same id, as perf does.
  std::unordered_map<uint64_t, uint64_t> last_read_;
  std::vector<std::vector<uint32_t>> group_members_;  // by leader event
};

Result<Recording> Loader::Run() {
  const unsigned jobs =
      options_.jobs != 0 ? options_.jobs : std::max(1u, std::thread::hardware_concurrency());
  StackUnwindingOptions unwind_options;
  unwind_options.jobs = jobs;
  const auto machine = format::FindMetadata(reader_.metadata(), "arch");
  unwind_options.arch = machine ? ArchFromMachine(*machine) : HostArch();
  unwind_options.symfs = options_.symfs;
  unwind_options.force = options_.force;
  unwind_options.vdso_image = reader_.vdso_image();
  unwinding_.emplace(unwind_options, processes_, reader_.build_ids());
  samples_.reserve(ExpectedRecords(reader_));
  {
    OrderedRecordStream stream(reader_, jobs);
    bool any = false;
    for (auto batch = stream.NextBatch(); !batch.empty(); batch = stream.NextBatch()) {
      if (!any) out_.stats.first_time = batch.front().time;
      any = true;
      out_.stats.last_time = batch.back().time;
      for (const TimedRecord& record : batch) Apply(record);
      FlushUnwinding();  // the batch's bytes go away with the next one
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
  // Symbolization opens DWARF (libc's debug file alone inflates to ~10 MB):
  // give back what only loading needed (decoded chunks, the unwinders'
  // state, the lookup indexes) first, so the two peaks do not add up.
  ReleaseLoadingState();

  const LocationFunctions symbols = Symbolize(jobs);
  std::vector<uint32_t> frames;
  std::vector<FrameAddress> addresses;
  // Each distinct stack of frames becomes a Profile stack once; samples are
  // rewritten in place and moved into the Profile.
  std::unordered_map<uint32_t, Profile::StackRef> stack_of;  // by frame stack begin
  for (ProfileSample& s : samples_) {
    auto [it, inserted] = stack_of.try_emplace(s.frames_begin);
    if (inserted) {
      frames.clear();
      addresses.clear();
      for (uint32_t id : frame_stacks_.Get({s.frames_begin, s.frames_count})) {
        const SeenFrame& frame = frames_[id];
        const uint32_t begin = symbols.begin[frame.location];
        for (uint32_t i = begin; i < begin + symbols.count[frame.location]; ++i) {
          frames.push_back(symbols.functions[i]);
          FrameAddress address{frame.ip, symbols.offsets[i]};
          // The function was found at ip - 1 for a return address; the
          // offset shown is the ip's own, as perf script prints it.
          if (address.symbol_offset != FrameAddress::kNoOffset && frame.return_address) {
            ++address.symbol_offset;
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
  for (uint32_t leader = 0; leader < group_members_.size(); ++leader) {
    if (!group_members_[leader].empty()) {
      std::sort(group_members_[leader].begin(), group_members_[leader].end());
      out_.profile.set_group_members(leader, group_members_[leader]);
    }
  }
  std::vector<std::string> dso_names;
  for (size_t i = 0; i < processes_.dso_count(); ++i) {
    dso_names.push_back(processes_.DsoPath(static_cast<uint32_t>(i)));
  }
  out_.profile.set_dso_names(std::move(dso_names));
  std::vector<std::string> event_names;
  const EventTable& events = reader_.events();
  for (const EventDesc& e : events.events()) event_names.push_back(e.name);
  out_.profile.set_event_names(std::move(event_names));
  out_.metadata = reader_.metadata();
  out_.build_ids = reader_.build_ids();
  out_.events = events.events();
  out_.callchains = std::ranges::any_of(out_.events, [](const EventDesc& e) {
    return (e.attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) != 0;
  });
  out_.trailer = reader_.trailer();
  out_.finalized = reader_.finalized();
  out_.file_size = reader_.file_size();
  out_.valid_end = reader_.valid_end();
  return std::move(out_);
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
      if (auto s = ParseSample(record, attr)) {
        AddSample(*s, timed.event, attr);
      } else {
        ok = false;
      }
      break;
    case PERF_RECORD_MMAP2:
      if (auto m = ParseMmap2(record, attr)) {
        // Only executable mappings matter for symbolization.
        if (m->prot & 0x4 /* PROT_EXEC */) {
          MappingsChanging(m->pid);
          processes_.ApplyMmap(m->pid, m->addr, m->len, m->pgoff, m->filename);
          chain_cache_.erase(m->pid);
        }
      } else {
        ok = false;
      }
      break;
    case PERF_RECORD_COMM:
      if (auto c = ParseComm(record, attr)) {
        if (c->exec) MappingsChanging(c->pid);
        processes_.ApplyComm(c->pid, c->tid, c->comm, c->exec);
        if (c->exec) chain_cache_.erase(c->pid);
      } else {
        ok = false;
      }
      break;
    case PERF_RECORD_FORK:
      if (auto f = ParseTask(record, attr)) {
        if (f->pid != f->ppid) MappingsChanging(f->pid);  // a new process
        processes_.ApplyFork(f->pid, f->ppid, f->tid, f->ptid);
      } else {
        ok = false;
      }
      break;
    case PERF_RECORD_EXIT:
      if (auto e = ParseTask(record, attr)) {
        processes_.ApplyExit(e->pid, e->tid);
      } else {
        ok = false;
      }
      break;
    case PERF_RECORD_LOST:
      if (auto l = ParseLost(record, attr)) {
        out_.stats.lost_samples += l->lost;
        CpuCounts& cpu = out_.stats.per_cpu[l->sample_id.cpu];
        cpu.lost_samples += l->lost;
        ++cpu.lost_records;
      } else {
        ok = false;
      }
      break;
    case PERF_RECORD_LOST_SAMPLES:
      if (auto l = ParseLostSamples(record, attr)) {
        out_.stats.lost_samples += l->lost;
        CpuCounts& cpu = out_.stats.per_cpu[l->sample_id.cpu];
        cpu.lost_samples += l->lost;
        ++cpu.lost_records;
      } else {
        ok = false;
      }
      break;
    default:
      break;
  }
  if (!ok) ++out_.stats.malformed_records;
}

uint32_t Loader::LocationId(uint32_t pid, uint64_t ip, bool return_address) {
  // A return address points after the call; the call itself is at ip - 1,
  // which matters when the call was a function's last instruction.
  const uint64_t address = return_address && ip != 0 ? ip - 1 : ip;
  Location location{ProcessTable::kUnknownDso, address};
  if (IsKernelAddress(address)) {
    location.dso = ProcessTable::kKernelDso;
  } else if (const Mapping* m = processes_.FindMapping(pid, address)) {
    if (IsAnonymousCode(processes_.DsoPath(m->dso))) {
      // JIT code: named by the process's /tmp/perf-PID.map, by address.
      location.dso = processes_.InternDso(PerfMapPath(pid));
    } else {
      location.dso = m->dso;
      location.offset = address - m->start + m->pgoff;
    }
  }
  auto [it, inserted] = location_ids_.emplace(location, static_cast<uint32_t>(locations_.size()));
  if (inserted) locations_.push_back(location);
  return it->second;
}

uint32_t Loader::FrameId(uint32_t pid, uint64_t ip, bool return_address) {
  const SeenFrame frame{LocationId(pid, ip, return_address), return_address, ip};
  auto [it, inserted] = frame_ids_.emplace(frame, static_cast<uint32_t>(frames_.size()));
  if (inserted) frames_.push_back(frame);
  return it->second;
}

void Loader::MappingsChanging(uint32_t pid) {
  if (unwinding_->HasQueuedFor(pid)) FlushUnwinding();
  unwinding_->MappingsChanged(pid);
}

void Loader::ReleaseLoadingState() {
  location_ids_ = {};
  frame_ids_ = {};
  chain_cache_ = {};
  last_read_ = {};
  scratch_ = {};
  // glibc keeps freed chunks (the decoded payloads are megabytes each) in
  // its arenas; without a trim they would still count in the peak RSS.
  malloc_trim(0);
}

void Loader::FlushUnwinding() {
  unwinding_->Flush([this](size_t index, std::span<const uint64_t> chain) {
    ProfileSample& sample = samples_[index];
    const U64List list(reinterpret_cast<const std::byte*>(chain.data()), chain.size());
    const SequenceInterner::Ref stack = StackOf(sample.pid, 0, list);
    sample.frames_begin = stack.begin;
    sample.frames_count = stack.count;
    out_.stats.frames += stack.count;
  });
}

void Loader::AddSample(const SampleRecord& s, uint32_t event, const perf_event_attr& attr) {
  ++out_.stats.samples;
  ++out_.stats.per_cpu[s.cpu].samples;
  ProfileSample header;
  header.event = event;
  header.comm = out_.profile.InternComm(processes_.CommOf(s.pid, s.tid));
  header.pid = s.pid;
  header.tid = s.tid;
  header.cpu = s.cpu;
  header.time = s.time;
  header.period = s.period;
  AddGroupReads(s, event, header);
  // Unwound samples get their stack when the unwinding stage flushes.
  if (!options_.unwind || !unwinding_->Queue(samples_.size(), s, attr)) {
    const SequenceInterner::Ref stack = StackOf(s.pid, s.ip, s.callchain);
    header.frames_begin = stack.begin;
    header.frames_count = stack.count;
    out_.stats.frames += header.frames_count;
  }
  samples_.push_back(header);
}

SequenceInterner::Ref Loader::StackOf(uint32_t pid, uint64_t ip, const U64List& callchain) {
  const std::span<const std::byte> chain =
      callchain.empty() ? std::as_bytes(std::span(&ip, 1)) : callchain.bytes();
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i + 8 <= chain.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, chain.data() + i, 8);
    hash = (hash ^ word) * 0x100000001b3ull;
    hash ^= hash >> 29;
  }
  auto& cache = chain_cache_[pid];
  auto cached = cache.find(hash);
  if (cached != cache.end() && std::ranges::equal(cached->second.chain, chain)) {
    return cached->second.stack;
  }
  scratch_.clear();
  // The first address after each context marker is where that context was
  // interrupted (exact); the rest are return addresses.
  bool exact = true;
  for (size_t i = 0; i < callchain.size(); ++i) {
    const uint64_t address = callchain[i];
    if (IsContextMarker(address)) {
      exact = true;
      continue;
    }
    scratch_.push_back(FrameId(pid, address, !exact));
    exact = false;
  }
  if (scratch_.empty()) scratch_.push_back(FrameId(pid, ip, false));
  const SequenceInterner::Ref stack = frame_stacks_.Intern(scratch_);
  if (cached == cache.end()) {  // a colliding entry stays; this chain is not cached
    cache.emplace(hash, CachedChain{std::vector<std::byte>(chain.begin(), chain.end()), stack});
  }
  return stack;
}

void Loader::AddGroupReads(const SampleRecord& s, uint32_t event, ProfileSample& header) {
  header.reads_begin = static_cast<uint32_t>(sample_reads_.size());
  for (size_t i = 0; i < s.read.size(); ++i) {
    const auto member = reader_.events().EventIndexForId(s.read.id(i));
    if (!member) {
      ++out_.stats.unknown_group_reads;
      continue;
    }
    if (*member == event) continue;  // the leader: its sample period is its count
    uint64_t& last = last_read_[s.read.id(i)];
    const uint64_t value = s.read.value(i);
    // Counters only grow; a smaller value means a new fd reused the id.
    const uint64_t delta = value >= last ? value - last : value;
    last = value;
    sample_reads_.push_back(MemberCount{static_cast<uint32_t>(*member), delta});
    if (event >= group_members_.size()) group_members_.resize(event + 1);
    auto& members = group_members_[event];
    if (std::find(members.begin(), members.end(), *member) == members.end()) {
      members.push_back(static_cast<uint32_t>(*member));
    }
  }
  header.reads_count = static_cast<uint32_t>(sample_reads_.size() - header.reads_begin);
}

Loader::LocationFunctions Loader::Symbolize(unsigned jobs) {
  // Samples per distinct stack, then frames per stack: unknown frames are
  // counted as perf does (per sample), without walking every sample's frames.
  std::unordered_map<uint32_t, std::pair<uint32_t, uint64_t>> stack_samples;  // begin -> (count, n)
  for (const ProfileSample& s : samples_) {
    auto& [count, n] = stack_samples[s.frames_begin];
    count = s.frames_count;
    ++n;
  }
  std::vector<uint64_t> uses(locations_.size(), 0);
  for (const auto& [begin, stack] : stack_samples) {
    for (uint32_t id : frame_stacks_.Get({begin, stack.first})) {
      uses[frames_[id].location] += stack.second;
    }
  }
  std::vector<std::string> dso_paths;
  for (size_t i = 0; i < processes_.dso_count(); ++i) {
    dso_paths.push_back(processes_.DsoPath(static_cast<uint32_t>(i)));
  }
  SymbolizeOptions options;
  options.jobs = jobs;
  options.force = options_.force;
  options.srclines = options_.srclines;
  options.symfs = options_.symfs;
  options.use_debuginfod = options_.use_debuginfod;
  options.show_progress = options_.show_progress;
  options.vdso_image = reader_.vdso_image();
  options.names = options_.symbolize;
  SymbolizeResult result = SymbolizeLocations(locations_, dso_paths, reader_.build_ids(),
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
  for (size_t i = 0; i < locations_.size(); ++i) {
    const Location& loc = locations_[i];
    const bool kernel = loc.dso == ProcessTable::kKernelDso;
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

Result<Recording> LoadRecording(const std::string& path, const LoadOptions& options) {
  TRY_ASSIGN(auto reader, format::SampleFileReader::Open(path));
  Loader loader(reader, options);
  auto recording = loader.Run();
  if (recording) {
    recording->warnings.insert(recording->warnings.begin(), reader.warnings().begin(),
                               reader.warnings().end());
  }
  return recording;
}

}  // namespace sample::report
