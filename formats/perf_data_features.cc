// PerfDataReader's feature sections (HEADER_FEATURE data): host facts,
// build-ids and event descriptions, each checked against its section's
// bounds. The rest of the reader is in perf_data_reader.cc.
#include <linux/perf_event.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include <fmt/format.h>

#include "formats/perf_data_reader.h"
#include "formats/perf_data_walker.h"
#include "libsample/string_parts.h"

namespace sample::format {
namespace {

using namespace perf_data;

// A perf header string: u32 length, then that many bytes, NUL-padded.
bool ReadPerfString(ByteReader& in, std::string* out) {
  uint32_t length;
  std::string_view text;
  if (!in.Read(&length) || !in.ReadString(length, &text)) return false;
  *out = std::string(text.substr(0, text.find('\0')));
  return true;
}

}  // namespace

void PerfDataReader::ReadFeatures(const perf_data::FileHeader& header, uint64_t data_end) {
  const auto bytes = file_.bytes();
  uint64_t index = 0;
  for (uint32_t feature = 0; feature < 256; ++feature) {
    if (!(header.features[feature / 64] & (uint64_t{1} << (feature % 64)))) continue;
    const uint64_t at = data_end + index++ * sizeof(perf_data::FileSection);
    if (!InRange(at, sizeof(perf_data::FileSection), bytes.size())) {
      Warn(fmt::format("{}: offset {}: the feature table is cut off; features from {} on are "
                       "missing",
                       path_, at, feature));
      return;
    }
    perf_data::FileSection section;
    std::memcpy(&section, bytes.data() + at, sizeof(section));
    if (!InRange(section.offset, section.size, bytes.size())) {
      Warn(fmt::format("{}: offset {}: feature {} ({} bytes at {}) is past the end; skipped",
                       path_, at, feature, section.size, section.offset));
      continue;
    }
    ReadFeature(feature, bytes.subspan(section.offset, section.size), section.offset);
  }
}

void PerfDataReader::ReadFeature(uint32_t feature, std::span<const std::byte> bytes,
                                 uint64_t offset) {
  ByteReader in(bytes);
  auto string_fact = [&](const char* key) {
    std::string value;
    if (ReadPerfString(in, &value)) metadata_.emplace_back(key, value);
  };
  switch (feature) {
    case kHostname:
      return string_fact("hostname");
    case kOsRelease:
      return string_fact("os_release");
    case kArch:
      return string_fact("arch");
    case kCpuDesc:
      return string_fact("cpu_description");
    case kCpuId:
      return string_fact("cpuid");
    case kVersion: {
      std::string version;
      if (ReadPerfString(in, &version)) metadata_.emplace_back("recorder_version", "perf " + version);
      return;
    }
    case kNrCpus: {
      uint32_t available, online;
      if (in.Read(&available) && in.Read(&online)) {
        metadata_.emplace_back("cpus_online", std::to_string(online));
        metadata_.emplace_back("cpus_available", std::to_string(available));
      }
      return;
    }
    case kTotalMem: {
      uint64_t kb;
      if (in.Read(&kb)) metadata_.emplace_back("total_memory_kb", std::to_string(kb));
      return;
    }
    case kCmdline: {
      uint32_t count;
      if (!in.Read(&count)) return;
      std::string line;
      for (uint32_t i = 0; i < count; ++i) {
        std::string arg;
        if (!ReadPerfString(in, &arg)) break;
        if (!line.empty()) line += ' ';
        line += arg;
      }
      metadata_.emplace_back("cmdline", line);
      return;
    }
    case kEventDesc:
      return ReadEventDesc(bytes, offset);
    case kBuildId:
      return ReadBuildIds(bytes, offset);
    case kCompressed: {
      uint32_t version, type, level, ratio;
      if (!(in.Read(&version) && in.Read(&type) && in.Read(&level) && in.Read(&ratio))) return;
      if (type != 1) {  // perf's only compressor is zstd (1)
        compressed_zstd_ = false;
        Warn(fmt::format("{}: offset {}: compression type {} is not zstd; compressed records are "
                         "skipped",
                         path_, offset, type));
      }
      metadata_.emplace_back("compression", fmt::format("zstd level {} (perf record -z)", level));
      return;
    }
    case kClockData: {
      uint32_t version, clockid;
      uint64_t wall_ns, clock_ns;
      if (in.Read(&version) && in.Read(&clockid) && in.Read(&wall_ns) && in.Read(&clock_ns)) {
        metadata_.emplace_back("start_realtime_ns", std::to_string(wall_ns));
        metadata_.emplace_back("start_clock_ns", std::to_string(clock_ns));
      }
      return;
    }
    default:
      if (feature > kLastKnownFeature) Count(fmt::format("unknown feature {} (skipped)", feature));
      return;
  }
}

void PerfDataReader::ReadBuildIds(std::span<const std::byte> bytes, uint64_t offset) {
  size_t at = 0;
  while (bytes.size() - at >= sizeof(perf_event_header) + sizeof(BuildIdEntry)) {
    const perf_event_header h = HeaderAt(bytes.data() + at);
    if (h.size < sizeof(h) + sizeof(BuildIdEntry) || h.size > bytes.size() - at) {
      Warn(fmt::format("{}: offset {}: a build-id entry of {} bytes; the rest are skipped", path_,
                       offset + at, h.size));
      return;
    }
    BuildIdEntry entry;
    std::memcpy(&entry, bytes.data() + at + sizeof(h), sizeof(entry));
    const size_t name_at = at + sizeof(h) + sizeof(entry);
    std::string name(reinterpret_cast<const char*>(bytes.data() + name_at), at + h.size - name_at);
    name.resize(std::strlen(name.c_str()));
    size_t size = 20;
    if (h.misc & kBuildIdSizeMisc) size = std::min<size_t>(entry.build_id[20], 20);
    if (!name.empty() && size != 0) {
      build_ids_.emplace_back(std::move(name),
                              HexBytes(std::as_bytes(std::span(entry.build_id, size))));
    }
    at += h.size;
  }
}

void PerfDataReader::ReadEventDesc(std::span<const std::byte> bytes, uint64_t offset) {
  ByteReader in(bytes);
  uint32_t count, attr_size;
  if (!in.Read(&count) || !in.Read(&attr_size)) return;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t id_count;
    std::string name;
    std::span<const std::byte> ids;
    if (!(in.Skip(attr_size) && in.Read(&id_count) && ReadPerfString(in, &name) &&
          in.ReadBytes(uint64_t{id_count} * 8, &ids))) {
      Warn(fmt::format("{}: offset {}: event descriptions cut off after {} of {}", path_, offset, i,
                       count));
      return;
    }
    names_by_index_.push_back(name);
    for (size_t k = 0; k < id_count; ++k) {
      uint64_t id;
      std::memcpy(&id, ids.data() + k * 8, 8);
      names_by_id_[id] = name;
    }
  }
}

}  // namespace sample::format
