// MemoryRecording: a RecordingFile whose records are not in a file but
// handed over by a recorder running in the same process (sample-top). Its
// events, metadata and kernel symbols are given once; its record chunks
// are replaced at every refresh by the chunks drained since the last one,
// so that a LiveLoader (report/load/recording_loader.h) reading it sees
// only what is new. Chunks come as the recorder drains them: their CPU
// fields are inserted here, as the file writer inserts them, so the
// records match the events' attrs (EventOpener::DescribeFile).
#pragma once

#include <string>
#include <vector>

#include "formats/recording_file.h"
#include "formats/sample_file_writer.h"

namespace sample::format {

class MemoryRecording final : public RecordingFile {
 public:
  MemoryRecording(std::string name, std::vector<EventDesc> events, Metadata metadata,
                  std::string kernel_symbols);

  // The record chunks from now on: `chunks`, in the order drained.
  void SetChunks(std::vector<RecordsChunk> chunks);
  // Buffers it no longer needs (the records of chunks whose CPU fields
  // were inserted into another), emptied, for the caller's next chunks:
  // a live view passes the same few megabytes around every second.
  std::vector<std::vector<std::byte>> TakeSpareBuffers();

  const std::string& path() const override { return name_; }
  std::string format_name() const override { return "live"; }
  const EventTable& events() const override { return events_; }
  const Metadata& metadata() const override { return metadata_; }
  const Metadata& build_ids() const override { return none_; }
  std::string_view kernel_symbols() const override { return kernel_symbols_; }
  std::span<const std::byte> vdso_image() const override { return {}; }
  const EmbeddedBinaries& embedded_binaries() const override { return embedded_; }
  const std::vector<RecordedPerfMap>& perf_maps() const override { return perf_maps_; }
  const std::vector<RecordedJitDump>& jit_dumps() const override { return jit_dumps_; }
  const std::optional<Counts>& counts() const override { return counts_; }
  const std::vector<ToggleEntry>& toggles() const override { return toggles_; }
  const std::vector<ControlEntry>& control() const override { return control_; }
  const std::vector<TraceFormatEntry>& trace_formats() const override { return trace_formats_; }
  const std::optional<Trailer>& trailer() const override { return trailer_; }
  const std::vector<ChunkRef>& record_chunks() const override { return refs_; }
  // Nothing torn: every record drained so far is here.
  bool finalized() const override { return true; }
  uint64_t file_size() const override { return 0; }
  uint64_t valid_end() const override { return 0; }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  const RecordCounts& other_records() const override { return other_records_; }
  // A chunk's offset is its index among record_chunks().
  Result<void> ReadPayloadInto(const ChunkRef& chunk, Payload& out) const override;

 private:
  std::string name_;
  EventTable events_;
  Metadata metadata_;
  Metadata none_;
  std::string kernel_symbols_;
  EmbeddedBinaries embedded_;
  std::vector<RecordedPerfMap> perf_maps_;
  std::vector<RecordedJitDump> jit_dumps_;
  std::optional<Counts> counts_;
  std::vector<ToggleEntry> toggles_;
  std::vector<ControlEntry> control_;
  std::vector<TraceFormatEntry> trace_formats_;
  std::optional<Trailer> trailer_;
  std::vector<std::string> warnings_;
  RecordCounts other_records_;
  std::vector<std::vector<std::byte>> payloads_;  // parallel to refs_
  std::vector<std::vector<std::byte>> spare_;     // emptied, to reuse
  std::vector<std::vector<std::byte>> given_;     // emptied, for TakeSpareBuffers
  std::vector<ChunkRef> refs_;
};

}  // namespace sample::format
