#include "report/report_pipeline.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "formats/sample_file_reader.h"
#include "libsample/elf_symbols.h"
#include "libsample/kallsyms.h"
#include "libsample/perf_record.h"
#include "libsample/process_table.h"
#include "libsample/record_walker.h"

namespace sample::report {
namespace {

// Where one record sits, and when it happened.
struct RecordRef {
  uint64_t time;
  uint32_t chunk;
  uint32_t offset;
  uint32_t size;
  uint32_t event;
};

// A code address as a DSO and an offset in its file (the absolute address
// for the unknown and kernel pseudo-DSOs).
struct Location {
  uint32_t dso;
  uint64_t offset;
  bool operator==(const Location&) const = default;
};

struct LocationHash {
  size_t operator()(const Location& l) const {
    return std::hash<uint64_t>()(l.offset * 0x9E3779B97F4A7C15ull ^ l.dso);
  }
};

class Loader {
 public:
  Loader(const format::SampleFileReader& reader, const LoadOptions& options)
      : reader_(reader), options_(options) {}
  Result<Recording> Run();

 private:
  void Apply(const RecordRef& ref, std::span<const std::byte> record);
  void AddSample(const SampleRecord& sample, uint32_t event);
  uint32_t LocationId(uint32_t pid, uint64_t ip, bool return_address);
  void AddGroupReads(const SampleRecord& sample, uint32_t event, ProfileSample& header);
  void Symbolize(Profile& profile, std::vector<uint32_t>& function_of_location,
                 std::vector<uint64_t>& offset_of_location);

  std::optional<ElfSymbols> LoadBinary(uint32_t dso);

  const format::SampleFileReader& reader_;
  const LoadOptions& options_;
  Recording out_;
  ProcessTable processes_;
  std::vector<Location> locations_;
  std::unordered_map<Location, uint32_t, LocationHash> location_ids_;
  // Samples as location ids until symbolization turns them into functions;
  // the ips (as the kernel reported them) and group reads run beside.
  std::vector<ProfileSample> samples_;
  std::vector<uint32_t> sample_locations_;
  std::vector<uint64_t> sample_ips_;
  std::vector<bool> sample_return_addresses_;
  std::vector<MemberCount> sample_reads_;
  // Group reads carry running totals per fd (id); members get the increase
  // since the previous read of the same id, as perf does.
  std::unordered_map<uint64_t, uint64_t> last_read_;
  std::vector<std::vector<uint32_t>> group_members_;  // by leader event
};

Result<Recording> Loader::Run() {
  const EventTable& events = reader_.events();
  std::vector<format::Payload> payloads;
  std::vector<RecordRef> refs;
  for (const format::ChunkRef& chunk : reader_.record_chunks()) {
    auto payload = reader_.ReadPayload(chunk);
    if (!payload) {
      ++out_.stats.bad_chunks;
      out_.warnings.push_back(payload.error().message + "; chunk skipped");
      continue;
    }
    const uint32_t chunk_index = static_cast<uint32_t>(payloads.size());
    const auto bytes = payload->bytes();
    const size_t walked =
        ForEachRecord(bytes, [&](const perf_event_header&, std::span<const std::byte> record) {
          auto event = events.EventIndexFor(record);
          if (!event) {
            ++out_.stats.unknown_event_records;
            return;
          }
          const uint64_t time = RecordTime(record, events.events()[*event].attr);
          refs.push_back(
              RecordRef{time, chunk_index, static_cast<uint32_t>(record.data() - bytes.data()),
                        static_cast<uint32_t>(record.size()), static_cast<uint32_t>(*event)});
        });
    if (walked != bytes.size()) {
      ++out_.stats.malformed_records;
      out_.warnings.push_back(fmt::format(
          "{}: offset {}: malformed record at byte {} of the chunk; the rest of the chunk is "
          "skipped",
          reader_.path(), chunk.offset, walked));
    }
    payloads.push_back(std::move(*payload));
  }

  // Each CPU's records are already in order; a stable sort keeps records
  // with equal times (e.g. COMM before the MMAP2s of an exec) as written.
  std::stable_sort(refs.begin(), refs.end(),
                   [](const RecordRef& a, const RecordRef& b) { return a.time < b.time; });
  for (const RecordRef& ref : refs) {
    Apply(ref, payloads[ref.chunk].bytes().subspan(ref.offset, ref.size));
  }
  if (!refs.empty()) {
    out_.stats.first_time = refs.front().time;
    out_.stats.last_time = refs.back().time;
  }
  payloads.clear();

  std::vector<uint32_t> function_of_location;
  std::vector<uint64_t> offset_of_location;
  Symbolize(out_.profile, function_of_location, offset_of_location);
  std::vector<uint32_t> frames;
  std::vector<FrameAddress> addresses;
  for (const ProfileSample& s : samples_) {
    frames.clear();
    addresses.clear();
    for (uint32_t i = s.frames_begin; i < s.frames_begin + s.frames_count; ++i) {
      const uint32_t location = sample_locations_[i];
      frames.push_back(function_of_location[location]);
      FrameAddress address{sample_ips_[i], offset_of_location[location]};
      // The function was found at ip - 1 for a return address; the offset
      // shown is the ip's own, as perf script prints it.
      if (address.symbol_offset != FrameAddress::kNoOffset && sample_return_addresses_[i]) {
        ++address.symbol_offset;
      }
      addresses.push_back(address);
    }
    out_.profile.AddSample(
        s, frames, addresses,
        std::span<const MemberCount>(sample_reads_).subspan(s.reads_begin, s.reads_count));
  }
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
  for (const EventDesc& e : events.events()) event_names.push_back(e.name);
  out_.profile.set_event_names(std::move(event_names));
  out_.metadata = reader_.metadata();
  out_.build_ids = reader_.build_ids();
  out_.events = events.events();
  out_.trailer = reader_.trailer();
  out_.finalized = reader_.finalized();
  out_.file_size = reader_.file_size();
  out_.valid_end = reader_.valid_end();
  return std::move(out_);
}

void Loader::Apply(const RecordRef& ref, std::span<const std::byte> record) {
  const perf_event_attr& attr = reader_.events().events()[ref.event].attr;
  const perf_event_header header = ReadRecordHeader(record);
  ++out_.stats.records;
  if (header.type < out_.stats.records_by_type.size()) ++out_.stats.records_by_type[header.type];
  bool ok = true;
  switch (header.type) {
    case PERF_RECORD_SAMPLE:
      if (auto s = ParseSample(record, attr)) {
        AddSample(*s, ref.event);
      } else {
        ok = false;
      }
      break;
    case PERF_RECORD_MMAP2:
      if (auto m = ParseMmap2(record, attr)) {
        // Only executable mappings matter for symbolization.
        if (m->prot & 0x4 /* PROT_EXEC */) {
          processes_.ApplyMmap(m->pid, m->addr, m->len, m->pgoff, m->filename);
        }
      } else {
        ok = false;
      }
      break;
    case PERF_RECORD_COMM:
      if (auto c = ParseComm(record, attr)) {
        processes_.ApplyComm(c->pid, c->tid, c->comm, c->exec);
      } else {
        ok = false;
      }
      break;
    case PERF_RECORD_FORK:
      if (auto f = ParseTask(record, attr)) {
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
    location.dso = m->dso;
    location.offset = address - m->start + m->pgoff;
  }
  auto [it, inserted] = location_ids_.emplace(location, static_cast<uint32_t>(locations_.size()));
  if (inserted) locations_.push_back(location);
  return it->second;
}

void Loader::AddSample(const SampleRecord& s, uint32_t event) {
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
  header.frames_begin = static_cast<uint32_t>(sample_locations_.size());
  // The first address after each context marker is where that context was
  // interrupted (exact); the rest are return addresses.
  bool exact = true;
  for (size_t i = 0; i < s.callchain.size(); ++i) {
    const uint64_t ip = s.callchain[i];
    if (IsContextMarker(ip)) {
      exact = true;
      continue;
    }
    sample_locations_.push_back(LocationId(s.pid, ip, !exact));
    sample_ips_.push_back(ip);
    sample_return_addresses_.push_back(!exact);
    exact = false;
  }
  if (sample_locations_.size() == header.frames_begin) {
    sample_locations_.push_back(LocationId(s.pid, s.ip, false));
    sample_ips_.push_back(s.ip);
    sample_return_addresses_.push_back(false);
  }
  header.frames_count = static_cast<uint32_t>(sample_locations_.size() - header.frames_begin);
  out_.stats.frames += header.frames_count;
  samples_.push_back(header);
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

// Loads a binary's symbols, refusing one whose build-id differs from the
// recorded one (a rebuilt or upgraded file would name the wrong functions).
std::optional<ElfSymbols> Loader::LoadBinary(uint32_t dso) {
  const std::string& path = processes_.DsoPath(dso);
  // --symfs: the recorded path under another root (perf's semantic: only
  // there). A full symbol-file finder will take this over.
  const std::string& root = options_.symfs;
  auto loaded = ElfSymbols::Load(root + path);
  if (!loaded) {
    if (path.starts_with('/')) ++out_.stats.missing_binaries;  // not [vdso] and the like
    return std::nullopt;
  }
  // Distribution binaries are stripped; their full symbol tables live in
  // separate debug files found by build-id (Debian's *-dbg/-dbgsym).
  if (!loaded->has_symtab() && loaded->build_id().size() > 2) {
    const std::string& id = loaded->build_id();
    auto debug = ElfSymbols::Load(
        fmt::format("{}/usr/lib/debug/.build-id/{}/{}.debug", root, id.substr(0, 2), id.substr(2)));
    if (debug && debug->build_id() == id) loaded->MergeDebugSymbols(*debug);
  }
  const auto recorded = format::FindMetadata(reader_.build_ids(), path);
  if (recorded && !recorded->empty() && loaded->build_id() != *recorded) {
    ++out_.stats.mismatched_binaries;
    if (!options_.force) {
      out_.warnings.push_back(fmt::format(
          "{} has build-id {} but the recording saw {}; its frames are shown as [unknown] "
          "(--force uses it anyway)",
          path, loaded->build_id().empty() ? "none" : loaded->build_id(), *recorded));
      return std::nullopt;
    }
    out_.warnings.push_back(
        fmt::format("{} has build-id {} but the recording saw {}; used anyway (--force)", path,
                    loaded->build_id().empty() ? "none" : loaded->build_id(), *recorded));
  }
  return std::move(*loaded);
}

void Loader::Symbolize(Profile& profile, std::vector<uint32_t>& function_of_location,
                       std::vector<uint64_t>& offset_of_location) {
  // One ELF load per DSO, one lookup per distinct location.
  const std::vector<KernelSymbol> kernel_symbols = ParseKallsyms(reader_.kernel_symbols());
  std::unordered_map<uint32_t, std::optional<ElfSymbols>> elves;
  std::vector<uint64_t> uses(locations_.size(), 0);
  for (uint32_t id : sample_locations_) ++uses[id];
  function_of_location.resize(locations_.size());
  offset_of_location.assign(locations_.size(), FrameAddress::kNoOffset);
  for (size_t i = 0; i < locations_.size(); ++i) {
    const Location& loc = locations_[i];
    const bool kernel = loc.dso == ProcessTable::kKernelDso;
    if (kernel) {
      if (const KernelSymbol* ks = FindKernelSymbol(kernel_symbols, loc.offset)) {
        function_of_location[i] = profile.InternFunction(loc.dso, ks->name, true, true);
        offset_of_location[i] = loc.offset - ks->addr;
        continue;
      }
    }
    const ElfSymbol* symbol = nullptr;
    uint64_t vaddr = 0;
    if (loc.dso != ProcessTable::kUnknownDso && !kernel) {
      auto [it, inserted] = elves.try_emplace(loc.dso);
      if (inserted) it->second = LoadBinary(loc.dso);
      if (it->second) {
        if (auto v = it->second->FileOffsetToVaddr(loc.offset)) {
          vaddr = *v;
          symbol = it->second->Find(vaddr);
        }
      }
    }
    if (symbol != nullptr) {
      function_of_location[i] = profile.InternFunction(loc.dso, symbol->name, kernel, true);
      offset_of_location[i] = vaddr - symbol->start;
    } else {
      out_.stats.unknown_frames += uses[i];
      function_of_location[i] = profile.InternFunction(
          loc.dso, fmt::format("[unknown] {:#x}", loc.offset), kernel, false);
    }
  }
}

}  // namespace

Result<Recording> LoadRecording(const std::string& path, const LoadOptions& options) {
  auto reader = format::SampleFileReader::Open(path);
  if (!reader) return tl::unexpected(reader.error());
  Loader loader(*reader, options);
  auto recording = loader.Run();
  if (recording) {
    recording->warnings.insert(recording->warnings.begin(), reader->warnings().begin(),
                               reader->warnings().end());
  }
  return recording;
}

}  // namespace sample::report
