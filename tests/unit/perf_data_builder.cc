#include "tests/unit/perf_data_builder.h"

#include <zstd.h>

#include <cstring>

#include "formats/perf_data_format.h"

namespace sample::testing {
namespace {

using namespace format::perf_data;

template <typename T>
void Put(Bytes& out, const T& value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

void PutBytes(Bytes& out, const Bytes& bytes) { out.insert(out.end(), bytes.begin(), bytes.end()); }

// u32 length (a multiple of 64, as perf pads), then the NUL-padded text.
void PutString(Bytes& out, const std::string& text) {
  const uint32_t length = static_cast<uint32_t>((text.size() + 1 + 63) / 64 * 64);
  Put(out, length);
  const size_t at = out.size();
  out.resize(at + length);
  std::memcpy(out.data() + at, text.data(), text.size());
}

Bytes BuildIdEntries(const PerfDataContents& c) {
  Bytes out;
  for (const auto& [path, hex] : c.build_ids) {
    BuildIdEntry entry{};
    entry.pid = -1;
    size_t size = 0;
    for (; size < 20 && 2 * size + 1 < hex.size(); ++size) {
      entry.build_id[size] = static_cast<uint8_t>(std::stoul(hex.substr(2 * size, 2), nullptr, 16));
    }
    entry.build_id[20] = static_cast<uint8_t>(size);
    const size_t name_size = (path.size() + 1 + 63) / 64 * 64;
    perf_event_header h{kHeaderBuildId, kBuildIdSizeMisc,
                        static_cast<uint16_t>(sizeof(h) + sizeof(entry) + name_size)};
    Put(out, h);
    Put(out, entry);
    const size_t at = out.size();
    out.resize(at + name_size);
    std::memcpy(out.data() + at, path.data(), path.size());
  }
  return out;
}

Bytes EventDesc(const PerfDataContents& c) {
  Bytes out;
  Put(out, static_cast<uint32_t>(c.events.size()));
  Put(out, static_cast<uint32_t>(sizeof(perf_event_attr)));
  for (const PerfDataEvent& e : c.events) {
    Put(out, e.attr);
    Put(out, static_cast<uint32_t>(e.ids.size()));
    PutString(out, e.name);
    for (uint64_t id : e.ids) Put(out, id);
  }
  return out;
}

// Every feature's bytes, by feature bit.
std::map<uint32_t, Bytes> Features(const PerfDataContents& c) {
  std::map<uint32_t, Bytes> features = c.raw_features;
  for (const auto& [feature, text] : c.strings) PutString(features[feature], text);
  if (!c.cmdline.empty()) {
    Bytes& out = features[kCmdline];
    Put(out, static_cast<uint32_t>(c.cmdline.size()));
    for (const std::string& arg : c.cmdline) PutString(out, arg);
  }
  if (!c.build_ids.empty()) features[kBuildId] = BuildIdEntries(c);
  if (c.event_desc) features[kEventDesc] = EventDesc(c);
  return features;
}

}  // namespace

Bytes PerfUserRecord(uint32_t type, const Bytes& payload) {
  Bytes out;
  perf_event_header h{type, 0, static_cast<uint16_t>(sizeof(h) + payload.size())};
  Put(out, h);
  PutBytes(out, payload);
  return out;
}

Bytes PerfFinishedRound() { return PerfUserRecord(kFinishedRound, {}); }

Bytes BuildPerfDataFile(const PerfDataContents& c, bool data_size_zero) {
  FileHeader header{};
  header.magic = kMagic;
  header.size = sizeof(FileHeader);
  header.attr_size = sizeof(perf_event_attr) + sizeof(FileSection);
  Bytes ids;  // every event's ids, right after the header
  std::vector<FileSection> id_sections;
  for (const PerfDataEvent& e : c.events) {
    id_sections.push_back({sizeof(FileHeader) + ids.size(), e.ids.size() * 8});
    for (uint64_t id : e.ids) Put(ids, id);
  }
  Bytes attrs;
  for (size_t i = 0; i < c.events.size(); ++i) {
    Put(attrs, c.events[i].attr);
    Put(attrs, id_sections[i]);
  }
  Bytes data;
  for (const Bytes& r : c.records) PutBytes(data, r);
  header.attrs = {sizeof(FileHeader) + ids.size(), attrs.size()};
  header.data = {header.attrs.offset + attrs.size(), data_size_zero ? 0 : data.size()};
  const std::map<uint32_t, Bytes> features = data_size_zero ? std::map<uint32_t, Bytes>{}
                                                             : Features(c);
  for (const auto& [feature, bytes] : features) {
    header.features[feature / 64] |= uint64_t{1} << (feature % 64);
  }
  Bytes out;
  Put(out, header);
  PutBytes(out, ids);
  PutBytes(out, attrs);
  PutBytes(out, data);
  // The feature table, then each feature's bytes.
  uint64_t at = out.size() + features.size() * sizeof(FileSection);
  for (const auto& [feature, bytes] : features) {
    Put(out, FileSection{at, bytes.size()});
    at += bytes.size();
  }
  for (const auto& [feature, bytes] : features) PutBytes(out, bytes);
  return out;
}

Bytes BuildPerfDataPipe(const PerfDataContents& c) {
  Bytes out;
  Put(out, PipeHeader{kMagic, sizeof(PipeHeader)});
  for (const PerfDataEvent& e : c.events) {
    Bytes payload;
    Put(payload, e.attr);
    for (uint64_t id : e.ids) Put(payload, id);
    PutBytes(out, PerfUserRecord(kHeaderAttr, payload));
  }
  for (const auto& [feature, bytes] : Features(c)) {
    if (feature == kBuildId) continue;  // pipe mode sends build-ids as records
    Bytes payload;
    Put(payload, static_cast<uint64_t>(feature));
    PutBytes(payload, bytes);
    PutBytes(out, PerfUserRecord(kHeaderFeature, payload));
  }
  PutBytes(out, BuildIdEntries(c));
  for (const Bytes& r : c.records) PutBytes(out, r);
  return out;
}

std::vector<Bytes> PerfCompressed(const std::vector<Bytes>& records, size_t frame_bytes,
                                  size_t record_payload, bool compressed2) {
  Bytes stream;
  for (const Bytes& r : records) PutBytes(stream, r);
  std::vector<Bytes> out;
  for (size_t begin = 0; begin < stream.size(); begin += frame_bytes) {
    const size_t size = std::min(frame_bytes, stream.size() - begin);
    Bytes frame(ZSTD_compressBound(size));
    frame.resize(ZSTD_compress(frame.data(), frame.size(), stream.data() + begin, size, 3));
    for (size_t at = 0; at < frame.size(); at += record_payload) {
      const Bytes part(frame.begin() + static_cast<ptrdiff_t>(at),
                       frame.begin() + static_cast<ptrdiff_t>(std::min(frame.size(), at + record_payload)));
      if (!compressed2) {
        out.push_back(PerfUserRecord(kCompressedRecord, part));
        continue;
      }
      Bytes payload;
      Put(payload, static_cast<uint64_t>(part.size()));
      PutBytes(payload, part);
      payload.resize((payload.size() + 7) / 8 * 8);
      out.push_back(PerfUserRecord(kCompressed2Record, payload));
    }
  }
  return out;
}

}  // namespace sample::testing
