// PerfDataReader: Linux perf's perf.data (perf_data_format.h) as a
// RecordingFile, in file mode or pipe mode, plain or compressed (-z).
//
// Open() maps nothing itself (OpenRecording hands it the mapping), reads
// the header, the event attributes and ids, and the feature sections, then
// scans the data section once: perf's own records are applied (attributes,
// features and build-ids in pipe mode, event names) or counted, and the
// kernel records are cut into chunks of about 1 MiB whose record counts and
// time ranges are noted, each starting where a fresh zstd stream can decode
// it. ReadPayloadInto() then gives a chunk's kernel records, decompressed,
// without perf's records, on any thread.
//
// Everything is bounds-checked; a torn end keeps what came before it, and a
// compressed stream is held to 8192 bytes out per byte in beyond its first
// MiB (the sample.data rule), so a crafted file cannot balloon the report.
// Kernel symbols come from perf's build-id cache (the copy perf record
// made), else from /proc/kallsyms when the running kernel has the recorded
// build-id; the metadata's "kernel_symbols" says which.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/perf_data_format.h"
#include "formats/perf_data_host.h"
#include "formats/recording_file.h"
#include "libsample/byte_reader.h"
#include "libsample/mapped_file.h"

namespace sample::format {

class PerfDataReader final : public RecordingFile {
 public:
  // `file` holds the bytes of `path`, which start with perf's magic.
  static Result<std::unique_ptr<PerfDataReader>> Open(const std::string& path, MappedFile file,
                                                      const PerfDataHost& host = {});

  const std::string& path() const override { return path_; }
  std::string format_name() const override { return pipe_ ? "perf.data (pipe mode)" : "perf.data"; }
  const EventTable& events() const override { return events_; }
  const Metadata& metadata() const override { return metadata_; }
  const Metadata& build_ids() const override { return build_ids_; }
  std::string_view kernel_symbols() const override {
    if (!kernel_symbols_file_) return {};
    const std::span<const std::byte> text = kernel_symbols_file_->bytes();
    return {reinterpret_cast<const char*>(text.data()), text.size()};
  }
  const std::string& host_kallsyms() const override { return host_kallsyms_; }
  std::span<const std::byte> vdso_image() const override {
    return std::as_bytes(std::span(vdso_image_));
  }
  const std::optional<Counts>& counts() const override { return counts_; }
  const EmbeddedBinaries& embedded_binaries() const override { return embedded_; }
  const std::vector<RecordedPerfMap>& perf_maps() const override { return perf_maps_; }
  const std::vector<RecordedJitDump>& jit_dumps() const override { return jit_dumps_; }
  const std::vector<ToggleEntry>& toggles() const override { return toggles_; }
  const std::vector<ControlEntry>& control() const override { return control_; }
  const std::vector<TraceFormatEntry>& trace_formats() const override { return trace_formats_; }
  const std::optional<Trailer>& trailer() const override { return trailer_; }
  const std::vector<ChunkRef>& record_chunks() const override { return chunks_; }
  bool finalized() const override { return finalized_; }
  uint64_t file_size() const override { return file_.bytes().size(); }
  uint64_t valid_end() const override { return valid_end_; }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  const RecordCounts& other_records() const override { return other_records_; }
  Result<void> ReadPayloadInto(const ChunkRef& chunk, Payload& out) const override;

 private:
  class Scanner;

  PerfDataReader(std::string path, MappedFile file)
      : path_(std::move(path)), file_(std::move(file)) {}
  Result<void> ReadFileMode(uint64_t* data_begin, uint64_t* data_end);
  Result<void> ReadAttrs(const perf_data::FileHeader& header);
  void ReadFeatures(const perf_data::FileHeader& header, uint64_t data_end);
  void ReadFeature(uint32_t feature, std::span<const std::byte> bytes, uint64_t offset);
  void ReadBuildIds(std::span<const std::byte> bytes, uint64_t offset);
  void ReadEventDesc(std::span<const std::byte> bytes, uint64_t offset);
  // Pipe mode's HEADER_ATTR, and EVENT_UPDATE's names.
  void AddAttrRecord(std::span<const std::byte> record, uint64_t offset);
  void AddEventName(uint64_t id, std::string name);
  void Scan(uint64_t begin, uint64_t end);
  // Names every event: from EVENT_DESC / EVENT_UPDATE, else from its type
  // and config.
  void NameEvents();
  // Whether an event with `ids` ids may be added: a crafted file may not
  // make the table (and its index) grow without bound.
  bool MayAddEvent(uint64_t ids);
  void FindKernelSymbols(const PerfDataHost& host);
  void Count(const std::string& what, uint64_t n = 1) { counts_by_name_[what] += n; }
  void Warn(std::string message) { warnings_.push_back(std::move(message)); }

  std::string path_;
  MappedFile file_;
  bool pipe_ = false;
  bool finalized_ = true;
  std::map<uint64_t, std::string> names_by_id_;  // EVENT_DESC, EVENT_UPDATE
  std::vector<std::string> names_by_index_;      // EVENT_DESC of events without ids
  EventTable events_;
  static constexpr size_t kMaxEvents = 4096;
  static constexpr uint64_t kMaxIds = uint64_t{1} << 22;
  uint64_t ids_ = 0;  // of every event so far
  bool too_many_events_ = false;
  bool compressed_zstd_ = true;
  Metadata metadata_;
  Metadata build_ids_;
  std::optional<MappedFile> kernel_symbols_file_;  // perf's kallsyms copy
  std::string host_kallsyms_;
  std::vector<std::byte> vdso_image_;
  EmbeddedBinaries embedded_;
  std::vector<RecordedPerfMap> perf_maps_;
  std::vector<RecordedJitDump> jit_dumps_;  // always empty in perf.data
  std::vector<ChunkRef> chunks_;
  // Per chunk: the bytes its records take decompressed, perf's included
  // (the most ReadPayloadInto may produce before dropping perf's).
  std::vector<uint64_t> expanded_sizes_;
  uint64_t valid_end_ = 0;
  std::vector<std::string> warnings_;
  std::map<std::string, uint64_t> counts_by_name_;
  RecordCounts other_records_;
  std::optional<Counts> counts_;
  std::vector<ToggleEntry> toggles_;
  std::vector<ControlEntry> control_;
  std::vector<TraceFormatEntry> trace_formats_;
  std::optional<Trailer> trailer_;
};

}  // namespace sample::format
