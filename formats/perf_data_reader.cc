#include "formats/perf_data_reader.h"

#include "formats/perf_data_walker.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "libsample/events/event_names.h"
#include "libsample/perf/perf_record.h"

namespace sample::format {
namespace {

using namespace perf_data;

// Chunks are cut at the first clean point past this many bytes of kernel
// records: small enough for the loader's workers to share out, large
// enough that a chunk's bookkeeping costs nothing.
constexpr uint64_t kChunkTarget = uint64_t{1} << 20;

// perf's name for an event it did not describe (files without EVENT_DESC).
std::string DefaultEventName(const perf_event_attr& attr) {
  for (const GenericEvent& e : GenericEvents()) {
    if (e.type == attr.type && e.config == attr.config) return std::string(e.canonical);
  }
  if (attr.type == PERF_TYPE_RAW) return fmt::format("r{:x}", attr.config);
  return fmt::format("type {} config {:#x}", attr.type, attr.config);
}

const char* UserRecordName(uint32_t type) {
  switch (type) {
    case kHeaderAttr: return "HEADER_ATTR";
    case kHeaderEventType: return "HEADER_EVENT_TYPE";
    case kHeaderTracingData: return "HEADER_TRACING_DATA";
    case kHeaderBuildId: return "HEADER_BUILD_ID";
    case kFinishedRound: return "FINISHED_ROUND";
    case kIdIndex: return "ID_INDEX";
    case kAuxtraceInfo: return "AUXTRACE_INFO";
    case kAuxtraceRecord: return "AUXTRACE (skipped)";
    case kAuxtraceError: return "AUXTRACE_ERROR";
    case kThreadMap: return "THREAD_MAP";
    case kCpuMap: return "CPU_MAP";
    case kStatConfig: return "STAT_CONFIG";
    case kStatRecord: return "STAT";
    case kStatRound: return "STAT_ROUND";
    case kEventUpdate: return "EVENT_UPDATE";
    case kTimeConv: return "TIME_CONV";
    case kHeaderFeature: return "HEADER_FEATURE";
    case kCompressedRecord: return "COMPRESSED";
    case kFinishedInit: return "FINISHED_INIT";
    case kCompressed2Record: return "COMPRESSED2";
    default: return nullptr;
  }
}

}  // namespace

Result<std::unique_ptr<PerfDataReader>> PerfDataReader::Open(const std::string& path,
                                                             MappedFile file,
                                                             const PerfDataHost& host) {
  std::unique_ptr<PerfDataReader> reader(new PerfDataReader(path, std::move(file)));
  const auto bytes = reader->file_.bytes();
  perf_data::PipeHeader pipe{};
  if (bytes.size() < sizeof(pipe)) {
    return Fail(fmt::format("{}: offset 0: {} bytes, too few for a perf.data header", path,
                            bytes.size()));
  }
  std::memcpy(&pipe, bytes.data(), sizeof(pipe));
  uint64_t begin = 0, end = 0;
  if (pipe.size == sizeof(perf_data::PipeHeader)) {
    reader->pipe_ = true;
    begin = sizeof(perf_data::PipeHeader);
    end = bytes.size();
  } else {
    TRY(reader->ReadFileMode(&begin, &end));
  }
  reader->Scan(begin, end);
  if (reader->events_.empty()) {
    return Fail(fmt::format("{}: no event attributes found (perf.data{} up to offset {})", path,
                            reader->pipe_ ? " in pipe mode" : "", reader->valid_end_));
  }
  reader->FindKernelSymbols(host);
  for (const auto& [what, n] : reader->counts_by_name_) reader->other_records_.emplace_back(what, n);
  return reader;
}

Result<void> PerfDataReader::ReadFileMode(uint64_t* data_begin, uint64_t* data_end) {
  const uint64_t total = file_.bytes().size();
  ByteReader in(file_.bytes());
  perf_data::FileHeader header{};
  if (!in.Read(&header)) {
    return Fail(fmt::format("{}: offset 0: {} bytes, fewer than perf.data's {}-byte header", path_,
                            total, sizeof(perf_data::FileHeader)));
  }
  if (header.size < sizeof(perf_data::FileHeader)) {
    return Fail(fmt::format("{}: offset 8: header size {} (perf.data headers have {})", path_,
                            header.size, sizeof(perf_data::FileHeader)));
  }
  TRY(ReadAttrs(header));
  if (!InRange(header.data.offset, 0, total)) {
    return Fail(fmt::format("{}: offset 40: the data section starts at {}, past the end ({})",
                            path_, header.data.offset, total));
  }
  *data_begin = header.data.offset;
  if (header.data.size == 0) {
    // perf writes the data size when it finishes; a killed perf leaves 0.
    finalized_ = false;
    *data_end = total;
    Warn(fmt::format("{}: the data size in the header is 0: perf record did not finish (killed or "
                     "crashed?); reading records to the end of the file",
                     path_));
    return {};
  }
  if (!InRange(header.data.offset, header.data.size, total)) {
    finalized_ = false;
    *data_end = total;
    Warn(fmt::format("{}: the data section claims {} bytes from offset {}, the file ends at {}: "
                     "reading what is there",
                     path_, header.data.size, header.data.offset, total));
    return {};
  }
  *data_end = header.data.offset + header.data.size;
  ReadFeatures(header, *data_end);
  return {};
}

Result<void> PerfDataReader::ReadAttrs(const perf_data::FileHeader& header) {
  const auto bytes = file_.bytes();
  // An attrs entry: the attr (at least its first version, 64 bytes), then
  // the section of its ids.
  if (header.attr_size < 64 + sizeof(perf_data::FileSection) || header.attr_size > (1u << 16)) {
    return Fail(fmt::format("{}: offset 16: attr size {} is not a perf_event_attr and its ids",
                            path_, header.attr_size));
  }
  if (!InRange(header.attrs.offset, header.attrs.size, bytes.size())) {
    return Fail(fmt::format("{}: offset 24: the attrs section ({} bytes at {}) is past the end "
                            "({})",
                            path_, header.attrs.size, header.attrs.offset, bytes.size()));
  }
  const uint64_t count = header.attrs.size / header.attr_size;
  for (uint64_t i = 0; i < count && MayAddEvent(0); ++i) {
    const uint64_t at = header.attrs.offset + i * header.attr_size;
    const uint64_t attr_bytes = header.attr_size - sizeof(perf_data::FileSection);
    EventDesc desc;
    std::memcpy(&desc.attr, bytes.data() + at, std::min<uint64_t>(attr_bytes, sizeof(desc.attr)));
    perf_data::FileSection ids;
    std::memcpy(&ids, bytes.data() + at + attr_bytes, sizeof(ids));
    if (!InRange(ids.offset, ids.size, bytes.size())) {
      Warn(fmt::format("{}: offset {}: event {}'s ids ({} bytes at {}) are past the end; the "
                       "event keeps none",
                       path_, at + attr_bytes, i, ids.size, ids.offset));
    } else {
      desc.ids.resize(ids.size / 8);
      if (!MayAddEvent(desc.ids.size())) break;
      // (an empty vector's data() is null, which memcpy must not get)
      if (!desc.ids.empty()) {
        std::memcpy(desc.ids.data(), bytes.data() + ids.offset, desc.ids.size() * 8);
      }
    }
    ids_ += desc.ids.size();
    events_.Add(std::move(desc));
  }
  if (events_.empty()) {
    return Fail(fmt::format("{}: offset 24: no event attributes (attrs section of {} bytes)", path_,
                            header.attrs.size));
  }
  return {};
}

bool PerfDataReader::MayAddEvent(uint64_t ids) {
  if (events_.events().size() < kMaxEvents && ids <= kMaxIds - ids_) return true;
  if (!too_many_events_) {
    too_many_events_ = true;
    Warn(fmt::format("{}: more than {} events or {} event ids; the rest are skipped", path_,
                     kMaxEvents, kMaxIds));
  }
  return false;
}

void PerfDataReader::AddAttrRecord(std::span<const std::byte> record, uint64_t offset) {
  const auto body = record.subspan(sizeof(perf_event_header));
  uint32_t attr_size = 0;
  if (body.size() >= 8) std::memcpy(&attr_size, body.data() + 4, 4);
  if (attr_size == 0) attr_size = 64;  // PERF_ATTR_SIZE_VER0 wrote no size
  if (body.size() < 8 || attr_size > body.size() || attr_size % 8 != 0) {
    Count("HEADER_ATTR, malformed (skipped)");
    Warn(fmt::format("{}: offset {}: an attribute record of {} bytes claims a {}-byte attr; the "
                     "event is skipped",
                     path_, offset, record.size(), attr_size));
    return;
  }
  EventDesc desc;
  std::memcpy(&desc.attr, body.data(), std::min<size_t>(attr_size, sizeof(desc.attr)));
  desc.ids.resize((body.size() - attr_size) / 8);
  if (!MayAddEvent(desc.ids.size())) return;
  if (!desc.ids.empty()) {
    std::memcpy(desc.ids.data(), body.data() + attr_size, desc.ids.size() * 8);
  }
  ids_ += desc.ids.size();
  events_.Add(std::move(desc));
}

void PerfDataReader::AddEventName(uint64_t id, std::string name) {
  names_by_id_[id] = std::move(name);
}

void PerfDataReader::NameEvents() {
  for (size_t i = 0; i < events_.events().size(); ++i) {
    const EventDesc& desc = events_.events()[i];
    std::string name;
    for (uint64_t id : desc.ids) {
      if (auto it = names_by_id_.find(id); it != names_by_id_.end()) {
        name = it->second;
        break;
      }
    }
    if (name.empty() && i < names_by_index_.size()) name = names_by_index_[i];
    events_.SetName(i, name.empty() ? DefaultEventName(desc.attr) : name);
  }
}

void PerfDataReader::Scan(uint64_t begin, uint64_t end) {
  DataWalker walker(file_.bytes(), begin, end, compressed_zstd_);
  ChunkRef chunk;
  chunk.offset = begin;
  auto close_chunk = [&](uint64_t at) {
    if (chunk.header.record_count != 0) {
      chunk.header.magic = kChunkMagic;
      chunk.header.type = static_cast<uint16_t>(ChunkType::kRecords);
      chunk.header.stored_size = at - chunk.offset;
      chunks_.push_back(chunk);
    }
    // Read again when the chunk is decoded: not resident meanwhile.
    file_.Release(chunk.offset, at - chunk.offset);
    chunk = ChunkRef{};
    chunk.offset = at;
  };
  auto kernel = [&](std::span<const std::byte> record) {
    ChunkHeader& h = chunk.header;
    ++h.record_count;
    h.raw_size += record.size();
    const auto event = events_.EventIndexFor(record);
    const uint64_t time = event ? RecordTime(record, events_.events()[*event].attr) : 0;
    if (time != 0) {
      h.time_min = h.time_min == 0 ? time : std::min(h.time_min, time);
      h.time_max = std::max(h.time_max, time);
    }
  };
  auto user = [&](const perf_event_header& h, std::span<const std::byte> record, uint64_t offset) {
    if (h.type < kUserTypeStart) {
      Count("kernel records of a size not a multiple of 8 (skipped)");
      return;
    }
    const char* name = UserRecordName(h.type);
    Count(name != nullptr ? name : fmt::format("unknown record type {} (skipped)", h.type));
    switch (h.type) {
      case kHeaderAttr:
        AddAttrRecord(record, offset);
        break;
      case kHeaderFeature:
        if (record.size() >= 16) {
          uint64_t feature;
          std::memcpy(&feature, record.data() + 8, 8);
          if (feature < 256) ReadFeature(static_cast<uint32_t>(feature), record.subspan(16), offset + 16);
        }
        break;
      case kHeaderBuildId:
        ReadBuildIds(record, offset);
        break;
      case kEventUpdate:
        if (record.size() > 24) {
          uint64_t kind, id;
          std::memcpy(&kind, record.data() + 8, 8);
          std::memcpy(&id, record.data() + 16, 8);
          if (kind == kEventUpdateName) {
            std::string text(reinterpret_cast<const char*>(record.data() + 24), record.size() - 24);
            AddEventName(id, text.substr(0, text.find('\0')));
          }
        }
        break;
      default:
        break;
    }
  };
  while (walker.Step(kernel, user)) {
    if (chunk.header.raw_size >= kChunkTarget && walker.aligned()) close_chunk(walker.position());
  }
  close_chunk(walker.position());
  if (walker.compressed_records() != 0) {
    Count("COMPRESSED (inflated)", walker.compressed_records());
  }
  valid_end_ = walker.problem().empty() ? file_.bytes().size() : walker.position();
  if (!walker.problem().empty()) {
    finalized_ = false;
    Warn(fmt::format("{}: {}; the records after it are skipped", path_, walker.problem()));
  }
  NameEvents();
}

void PerfDataReader::FindKernelSymbols(const PerfDataHost& host) {
  PerfDataHostFacts facts = FindPerfDataHostFacts(metadata_, build_ids_, host);
  kernel_symbols_file_ = std::move(facts.kernel_symbols);
  host_kallsyms_ = std::move(facts.host_kallsyms);
  vdso_image_ = std::move(facts.vdso_image);
  metadata_.emplace_back("kernel_symbols", facts.kernel_symbols_source);
}

Result<void> PerfDataReader::ReadPayloadInto(const ChunkRef& chunk, Payload& out) const {
  out.Resize(chunk.header.raw_size);
  const std::span<std::byte> dst = out.mutable_bytes();
  size_t written = 0;
  bool overflow = false;
  DataWalker walker(file_.bytes(), chunk.offset, chunk.offset + chunk.header.stored_size,
                    compressed_zstd_);
  auto kernel = [&](std::span<const std::byte> record) {
    if (record.size() > dst.size() - written) {
      overflow = true;
      return;
    }
    std::memcpy(dst.data() + written, record.data(), record.size());
    written += record.size();
  };
  auto user = [](const perf_event_header&, std::span<const std::byte>, uint64_t) {};
  while (!overflow && walker.Step(kernel, user)) {
  }
  file_.Release(chunk.offset, chunk.header.stored_size);  // copied out
  // A problem after the chunk's last record (the scan stopped there too)
  // takes nothing from it.
  if (!overflow && written == dst.size()) return {};
  if (!walker.problem().empty()) return Fail(fmt::format("{}: {}", path_, walker.problem()));
  return Fail(fmt::format("{}: offset {}: the records there differ from when the file was opened "
                          "({} bytes, then {}); was it changed?",
                          path_, chunk.offset, chunk.header.raw_size, written));
}

}  // namespace sample::format
