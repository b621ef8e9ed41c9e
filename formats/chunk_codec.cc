#include "formats/chunk_codec.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "libsample/byte_reader.h"
#include "libsample/perf/record_walker.h"

namespace sample::format {
namespace {

size_t Pad8(size_t n) { return (n + 7) & ~size_t{7}; }

void Append(std::vector<std::byte>& out, const void* data, size_t size, size_t padded_size) {
  const size_t old = out.size();
  out.resize(old + padded_size);  // zero-fills the padding
  if (size != 0) std::memcpy(out.data() + old, data, size);
}

template <typename T>
void AppendValue(std::vector<std::byte>& out, const T& value) {
  Append(out, &value, sizeof(value), sizeof(value));
}

// Calls fn(time_field) for each sample in `records` long enough to hold a
// time at `time_offset`, in order.
template <typename Fn>
void ForEachSampleTime(std::span<std::byte> records, uint32_t time_offset, Fn&& fn) {
  ForEachRecord(records, [&](const perf_event_header& header, std::span<const std::byte> record) {
    if (header.type != PERF_RECORD_SAMPLE || record.size() < size_t{time_offset} + 8) return;
    // The walker hands out const views of our own mutable bytes.
    fn(const_cast<std::byte*>(record.data()) + time_offset);
  });
}

}  // namespace

void EncodeSampleTimeDeltas(std::span<std::byte> records, uint32_t time_offset) {
  uint64_t previous = 0;
  ForEachSampleTime(records, time_offset, [&](std::byte* field) {
    uint64_t time;
    std::memcpy(&time, field, 8);
    const uint64_t delta = time - previous;  // modulo 2^64: times may step back
    std::memcpy(field, &delta, 8);
    previous = time;
  });
}

void DecodeSampleTimeDeltas(std::span<std::byte> records, uint32_t time_offset) {
  uint64_t time = 0;
  ForEachSampleTime(records, time_offset, [&](std::byte* field) {
    uint64_t delta;
    std::memcpy(&delta, field, 8);
    time += delta;
    std::memcpy(field, &time, 8);
  });
}

std::vector<std::byte> EncodeEvents(const std::vector<EventDesc>& events) {
  std::vector<std::byte> out;
  for (const EventDesc& e : events) {
    EventEntryHeader h{};
    h.attr_size = sizeof(perf_event_attr);
    h.name_size = static_cast<uint32_t>(e.name.size());
    h.id_count = static_cast<uint32_t>(e.ids.size());
    AppendValue(out, h);
    Append(out, &e.attr, sizeof(e.attr), Pad8(sizeof(e.attr)));
    Append(out, e.name.data(), e.name.size(), Pad8(e.name.size()));
    Append(out, e.ids.data(), e.ids.size() * sizeof(uint64_t), e.ids.size() * sizeof(uint64_t));
  }
  return out;
}

Result<std::vector<EventDesc>> DecodeEvents(std::span<const std::byte> payload,
                                            uint64_t file_offset) {
  ByteReader in(payload, file_offset);
  std::vector<EventDesc> events;
  while (!in.empty()) {
    const uint64_t entry_offset = in.file_offset();
    EventEntryHeader h;
    std::span<const std::byte> attr_bytes;
    std::string_view name;
    if (!in.Read(&h) || !in.ReadBytes(Pad8(h.attr_size), &attr_bytes)) {
      return Fail(fmt::format("event entry at offset {} is truncated", entry_offset));
    }
    EventDesc e;
    // Attributes from a newer or older kernel header: keep the common prefix.
    std::memcpy(&e.attr, attr_bytes.data(), std::min<size_t>(h.attr_size, sizeof(e.attr)));
    const uint64_t name_offset = in.file_offset();
    if (!in.ReadString(Pad8(h.name_size), &name) || name.size() > h.name_size) {
      return Fail(fmt::format("event name at offset {} is truncated", name_offset));
    }
    e.name.assign(name.data(), std::min<size_t>(name.size(), h.name_size));
    if (h.id_count > in.remaining() / sizeof(uint64_t)) {
      return Fail(fmt::format("event '{}' at offset {} claims {} ids, more than the chunk holds",
                              e.name, entry_offset, h.id_count));
    }
    e.ids.resize(h.id_count);
    for (uint64_t& id : e.ids) in.Read(&id);
    events.push_back(std::move(e));
  }
  return events;
}

std::vector<std::byte> EncodeTraceFormats(const std::vector<TraceFormatEntry>& entries) {
  std::vector<std::byte> out;
  for (const TraceFormatEntry& e : entries) {
    TraceFormatEntryHeader h{};
    h.event_index = e.event_index;
    h.format_size = static_cast<uint32_t>(e.format.size());
    h.filter_size = static_cast<uint32_t>(e.filter.size());
    h.tracepoint_id = e.tracepoint_id;
    AppendValue(out, h);
    Append(out, e.format.data(), e.format.size(), Pad8(e.format.size()));
    Append(out, e.filter.data(), e.filter.size(), Pad8(e.filter.size()));
  }
  return out;
}

Result<std::vector<TraceFormatEntry>> DecodeTraceFormats(std::span<const std::byte> payload,
                                                         uint64_t file_offset) {
  ByteReader in(payload, file_offset);
  std::vector<TraceFormatEntry> entries;
  while (!in.empty()) {
    const uint64_t entry_offset = in.file_offset();
    TraceFormatEntryHeader h;
    std::span<const std::byte> format, filter;
    // Pad8 of a u32 size cannot overflow size_t on 64-bit hosts.
    if (!in.Read(&h) || !in.ReadBytes(Pad8(h.format_size), &format) ||
        !in.ReadBytes(Pad8(h.filter_size), &filter)) {
      return Fail(fmt::format("trace format entry at offset {} is truncated", entry_offset));
    }
    TraceFormatEntry e;
    e.event_index = h.event_index;
    e.tracepoint_id = h.tracepoint_id;
    e.format.assign(reinterpret_cast<const char*>(format.data()), h.format_size);
    e.filter.assign(reinterpret_cast<const char*>(filter.data()), h.filter_size);
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<std::byte> EncodeCounts(const Counts& counts) {
  std::vector<std::byte> out;
  CountsHeader h{};
  h.source = counts.source;
  h.entry_count = static_cast<uint32_t>(counts.events.size());
  h.elapsed_ns = counts.elapsed_ns;
  AppendValue(out, h);
  for (const EventCounts& e : counts.events) {
    CountEntryHeader entry{};
    entry.attr_size = sizeof(perf_event_attr);
    entry.name_size = static_cast<uint32_t>(e.name.size());
    entry.flags = e.supported ? 0 : kCountNotSupported;
    entry.interval_count = static_cast<uint32_t>(e.intervals.size());
    entry.count = e.count;
    entry.time_enabled = e.time_enabled;
    entry.time_running = e.time_running;
    AppendValue(out, entry);
    Append(out, &e.attr, sizeof(e.attr), Pad8(sizeof(e.attr)));
    Append(out, e.name.data(), e.name.size(), Pad8(e.name.size()));
    for (const CountInterval& interval : e.intervals) AppendValue(out, interval);
  }
  return out;
}

Result<Counts> DecodeCounts(std::span<const std::byte> payload, uint64_t file_offset) {
  ByteReader in(payload, file_offset);
  CountsHeader h;
  if (!in.Read(&h)) return Fail(fmt::format("counts at offset {} are truncated", file_offset));
  Counts counts;
  counts.source = h.source;
  counts.elapsed_ns = h.elapsed_ns;
  for (uint32_t i = 0; i < h.entry_count; ++i) {
    const uint64_t entry_offset = in.file_offset();
    CountEntryHeader entry;
    std::span<const std::byte> attr_bytes;
    std::string_view name;
    if (!in.Read(&entry) || !in.ReadBytes(Pad8(entry.attr_size), &attr_bytes) ||
        !in.ReadString(Pad8(entry.name_size), &name) || name.size() > entry.name_size) {
      return Fail(fmt::format("count entry at offset {} is truncated", entry_offset));
    }
    EventCounts e;
    std::memcpy(&e.attr, attr_bytes.data(), std::min<size_t>(entry.attr_size, sizeof(e.attr)));
    e.name.assign(name.data(), std::min<size_t>(name.size(), entry.name_size));
    e.supported = (entry.flags & kCountNotSupported) == 0;
    e.count = entry.count;
    e.time_enabled = entry.time_enabled;
    e.time_running = entry.time_running;
    if (entry.interval_count > in.remaining() / sizeof(CountInterval)) {
      return Fail(
          fmt::format("counts of '{}' at offset {} claim {} intervals, more than the "
                      "chunk holds",
                      e.name, entry_offset, entry.interval_count));
    }
    e.intervals.resize(entry.interval_count);
    for (CountInterval& interval : e.intervals) in.Read(&interval);
    counts.events.push_back(std::move(e));
  }
  return counts;
}

std::vector<std::byte> EncodeToggles(const std::vector<ToggleEntry>& toggles) {
  std::vector<std::byte> out;
  for (const ToggleEntry& entry : toggles) AppendValue(out, entry);
  return out;
}

Result<std::vector<ToggleEntry>> DecodeToggles(std::span<const std::byte> payload,
                                               uint64_t file_offset, size_t event_count) {
  if (payload.size() % sizeof(ToggleEntry) != 0) {
    return Fail(fmt::format("toggles at offset {}: {} bytes is not a whole number of entries",
                            file_offset, payload.size()));
  }
  ByteReader in(payload, file_offset);
  std::vector<ToggleEntry> toggles;
  while (!in.empty()) {
    const uint64_t offset = in.file_offset();
    ToggleEntry entry;
    in.Read(&entry);
    if (entry.trigger >= event_count || entry.target >= event_count ||
        entry.trigger == entry.target) {
      return Fail(fmt::format("toggle at offset {} names events {} and {} of {}", offset,
                              entry.trigger, entry.target, event_count));
    }
    if (entry.action > kToggleOn || entry.scope > kToggleCpu || entry.target_starts_on > 1) {
      return Fail(fmt::format("toggle at offset {} has an unknown action, scope or start", offset));
    }
    toggles.push_back(entry);
  }
  return toggles;
}

std::vector<std::byte> EncodeControl(const std::vector<ControlEntry>& entries) {
  std::vector<std::byte> out;
  for (const ControlEntry& e : entries) AppendValue(out, e);
  return out;
}

Result<std::vector<ControlEntry>> DecodeControl(std::span<const std::byte> payload,
                                                uint64_t file_offset) {
  if (payload.size() % sizeof(ControlEntry) != 0) {
    return Fail(fmt::format("control entries at offset {}: {} bytes are not whole {}-byte entries",
                            file_offset, payload.size(), sizeof(ControlEntry)));
  }
  ByteReader in(payload, file_offset);
  std::vector<ControlEntry> entries(payload.size() / sizeof(ControlEntry));
  for (ControlEntry& e : entries) {
    const uint64_t offset = in.file_offset();
    in.Read(&e);
    if (e.action != kControlEnable && e.action != kControlDisable) {
      return Fail(
          fmt::format("control entry at offset {} has unknown action {}", offset, e.action));
    }
  }
  return entries;
}

std::vector<std::byte> EncodeMetadata(const Metadata& metadata) {
  std::vector<std::byte> out;
  for (const auto& [key, value] : metadata) {
    AppendValue(out, static_cast<uint32_t>(key.size()));
    AppendValue(out, static_cast<uint32_t>(value.size()));
    Append(out, key.data(), key.size(), key.size());
    Append(out, value.data(), value.size(), value.size());
  }
  return out;
}

Result<Metadata> DecodeMetadata(std::span<const std::byte> payload, uint64_t file_offset) {
  ByteReader in(payload, file_offset);
  Metadata metadata;
  while (!in.empty()) {
    const uint64_t entry_offset = in.file_offset();
    uint32_t key_size, value_size;
    std::span<const std::byte> key, value;
    if (!(in.Read(&key_size) && in.Read(&value_size) && in.ReadBytes(key_size, &key) &&
          in.ReadBytes(value_size, &value))) {
      return Fail(fmt::format("metadata entry at offset {} is truncated", entry_offset));
    }
    metadata.emplace_back(std::string(reinterpret_cast<const char*>(key.data()), key.size()),
                          std::string(reinterpret_cast<const char*>(value.data()), value.size()));
  }
  return metadata;
}

std::vector<std::byte> EncodeTrailer(const Trailer& trailer) {
  std::vector<std::byte> out;
  TrailerHeader h = trailer.header;
  h.cpu_count = static_cast<uint32_t>(trailer.cpus.size());
  h.chunk_count = trailer.chunk_offsets.size();
  AppendValue(out, h);
  for (const TrailerCpu& cpu : trailer.cpus) AppendValue(out, cpu);
  for (uint64_t offset : trailer.chunk_offsets) AppendValue(out, offset);
  return out;
}

Result<Trailer> DecodeTrailer(std::span<const std::byte> payload, uint64_t file_offset) {
  ByteReader in(payload, file_offset);
  Trailer t;
  if (!in.Read(&t.header)) {
    return Fail(fmt::format("trailer at offset {} is shorter than its header", file_offset));
  }
  const uint64_t cpu_bytes = uint64_t{t.header.cpu_count} * sizeof(TrailerCpu);
  if (cpu_bytes > in.remaining() ||
      t.header.chunk_count > (in.remaining() - cpu_bytes) / sizeof(uint64_t)) {
    return Fail(fmt::format("trailer at offset {} claims {} CPUs and {} chunks, more than it holds",
                            file_offset, t.header.cpu_count, t.header.chunk_count));
  }
  t.cpus.resize(t.header.cpu_count);
  for (TrailerCpu& cpu : t.cpus) in.Read(&cpu);
  t.chunk_offsets.resize(t.header.chunk_count);
  for (uint64_t& offset : t.chunk_offsets) in.Read(&offset);
  return t;
}

std::optional<std::string> FindMetadata(const Metadata& metadata, std::string_view key) {
  for (const auto& [k, v] : metadata) {
    if (k == key) return v;
  }
  return std::nullopt;
}

}  // namespace sample::format
