// Encoders and decoders for the payloads of our own chunk types (events,
// metadata, counts, trailer); layouts are specified in sample_file_format.h. Decoders
// take untrusted bytes and the payload's file offset, and name the offset of
// whatever is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "formats/sample_file_format.h"
#include "libsample/perf/event_table.h"
#include "libsample/result.h"

namespace sample::format {

using Metadata = std::vector<std::pair<std::string, std::string>>;

// Totals kept by the recorder and written in the trailer.
struct Trailer {
  TrailerHeader header{};
  std::vector<TrailerCpu> cpus;
  std::vector<uint64_t> chunk_offsets;
};

// One event's counts (kCounts).
struct EventCounts {
  std::string name;
  perf_event_attr attr{};
  bool supported = true;
  uint64_t count = 0, time_enabled = 0, time_running = 0;
  std::vector<CountInterval> intervals;  // -I: cumulative totals at each end
};

struct Counts {
  uint32_t source = kCountsFromCounting;  // kCountsFrom*
  uint64_t elapsed_ns = 0;
  std::vector<EventCounts> events;
};

// One recorded tracepoint's format text and filter (kTraceFormats).
struct TraceFormatEntry {
  uint32_t event_index = 0;
  uint64_t tracepoint_id = 0;
  std::string format;  // tracefs events/SUBSYSTEM/NAME/format text
  std::string filter;  // --filter expression; empty: none
};

std::vector<std::byte> EncodeTraceFormats(const std::vector<TraceFormatEntry>& entries);
Result<std::vector<TraceFormatEntry>> DecodeTraceFormats(std::span<const std::byte> payload,
                                                         uint64_t file_offset);

std::vector<std::byte> EncodeCounts(const Counts& counts);
Result<Counts> DecodeCounts(std::span<const std::byte> payload, uint64_t file_offset);

std::vector<std::byte> EncodeToggles(const std::vector<ToggleEntry>& toggles);
// Entries whose indices name no event of `event_count`, or whose values
// are out of range, make the chunk malformed.
Result<std::vector<ToggleEntry>> DecodeToggles(std::span<const std::byte> payload,
                                               uint64_t file_offset, size_t event_count);
// kControl: a chunk's switches. Decoding fails on a payload that is not
// whole entries or on an unknown action, naming the offset.
std::vector<std::byte> EncodeControl(const std::vector<ControlEntry>& entries);
Result<std::vector<ControlEntry>> DecodeControl(std::span<const std::byte> payload,
                                                uint64_t file_offset);

std::vector<std::byte> EncodeEvents(const std::vector<EventDesc>& events);
Result<std::vector<EventDesc>> DecodeEvents(std::span<const std::byte> payload,
                                            uint64_t file_offset);

std::vector<std::byte> EncodeMetadata(const Metadata& metadata);
Result<Metadata> DecodeMetadata(std::span<const std::byte> payload, uint64_t file_offset);

std::vector<std::byte> EncodeTrailer(const Trailer& trailer);
Result<Trailer> DecodeTrailer(std::span<const std::byte> payload, uint64_t file_offset);

// kChunkFlagSampleTimeDeltas (sample_file_format.h): replaces the time of
// every PERF_RECORD_SAMPLE in `records`, at byte `time_offset` of the
// record, with its difference from the previous sample's, in place. A
// sample too short to hold the field is left alone, by both directions.
void EncodeSampleTimeDeltas(std::span<std::byte> records, uint32_t time_offset);
// Adds the differences back up. Stops where the records stop being well
// formed (as ForEachRecord does); readers report that when they walk them.
void DecodeSampleTimeDeltas(std::span<std::byte> records, uint32_t time_offset);

// The value for `key`, or nullopt.
std::optional<std::string> FindMetadata(const Metadata& metadata, std::string_view key);

}  // namespace sample::format
