// SampleFileReader: opens a sample.data file and gives access to its chunks.
//
// Open() maps the file, validates the file header and walks the chunk
// headers (cheap: payloads are skipped), decoding the event, metadata and
// trailer chunks on the way. Record payloads are checksummed and
// decompressed on demand by ReadPayload(), so callers can process chunks one
// at a time or in parallel. A file that ends in a torn chunk, or has no
// trailer, still opens: everything complete is available and warnings() says
// what was missing. Only an unreadable file header or missing event
// descriptions are fatal. Owns the mapping.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/decode_budget.h"
#include "formats/embedded_codec.h"
#include "formats/recording_file.h"
#include "formats/sample_columns.h"
#include "formats/sample_file_format.h"
#include "libsample/byte_reader.h"
#include "libsample/mapped_file.h"
#include "libsample/perf/event_table.h"
#include "libsample/result.h"

namespace sample::format {

class SampleFileReader final : public RecordingFile {
 public:
  static Result<SampleFileReader> Open(const std::string& path);
  // The same over a file already mapped (OpenRecording read its magic).
  // Its embedded chunks are decoded within `budget`, shared by the files
  // of a set (nullptr: a budget of this file's own).
  static Result<SampleFileReader> Open(const std::string& path, MappedFile file,
                                       DecodeBudget* budget = nullptr);

  const std::string& path() const override { return path_; }
  std::string format_name() const override { return "sample.data"; }
  const FileHeader& file_header() const { return file_header_; }
  // sample.data holds only kernel records in its record chunks.
  const RecordCounts& other_records() const override { return other_records_; }
  const EventTable& events() const override { return events_; }
  const Metadata& metadata() const override { return metadata_; }
  // Binary path -> GNU build-id (hex), as recorded at close.
  const Metadata& build_ids() const override { return build_ids_; }
  // kallsyms-format text of the kernel symbols the samples hit; may be empty.
  std::string_view kernel_symbols() const override { return kernel_symbols_; }
  // A file that was never closed has no kernel symbols: on the boot it
  // was recorded on, this host's table names its kernel addresses.
  const std::string& host_kallsyms() const override { return host_kallsyms_; }
  // The recording host's [vdso] ELF image (kVdso); empty if not stored.
  std::span<const std::byte> vdso_image() const override { return vdso_image_.bytes(); }
  const EmbeddedBinaries& embedded_binaries() const override { return embedded_; }
  const std::vector<RecordedPerfMap>& perf_maps() const override { return perf_maps_; }
  const std::vector<RecordedJitDump>& jit_dumps() const override { return jit_dumps_; }
  // The counters' totals (kCounts): of a counting run, or each sampling
  // event's at the end of a recording; nullopt in files without them.
  const std::optional<Counts>& counts() const override { return counts_; }
  // Which events switch which on and off (kToggles); empty without toggles.
  const std::vector<ToggleEntry>& toggles() const override { return toggles_; }
  // When sampling was switched on and off (kControl), in file order;
  // empty when it was on throughout.
  const std::vector<ControlEntry>& control() const override { return control_; }
  // The recorded tracepoints' format texts and filters (kTraceFormats),
  // by event index; empty in files without tracepoints. Untrusted text:
  // parse it with ParseTraceFormat.
  const std::vector<TraceFormatEntry>& trace_formats() const override { return trace_formats_; }
  // Chunks of kernel records, in file order.
  const std::vector<ChunkRef>& record_chunks() const override { return record_chunks_; }
  // The trailer, when the recorder closed the file cleanly.
  const std::optional<Trailer>& trailer() const override { return trailer_; }
  bool finalized() const override { return trailer_.has_value(); }
  uint64_t file_size() const override { return file_.bytes().size(); }
  // Where reading stopped early (a torn or corrupt chunk), else file_size().
  uint64_t valid_end() const override { return valid_end_; }
  // Problems found while opening: torn end, missing trailer, skipped chunks.
  const std::vector<std::string>& warnings() const override { return warnings_; }

  // Checks the chunk's CRC and decompresses its payload. Errors name the
  // file and the chunk's offset. Safe to call from several threads.
  Result<Payload> ReadPayload(const ChunkRef& chunk) const;
  // The same into `out`, reusing its memory; `out` is unspecified on error.
  Result<void> ReadPayloadInto(const ChunkRef& chunk, Payload& out) const override;

 private:
  SampleFileReader(std::string path, MappedFile file)
      : path_(std::move(path)), file_(std::move(file)) {}
  Result<void> Scan();
  // A records payload's time (at `time_offset`; 0: none) and register
  // deltas added back up (sample_file_format.h's chunk flags).
  // Undoes the chunk flags' rewritings of a records payload; only the
  // columns' can fail (a crafted chunk), named by the chunk's offset.
  Result<void> UndoDeltas(uint64_t chunk_offset, Payload& payload, uint32_t time_offset,
                          bool reg_deltas, bool columns, ColumnCoding coding) const;
  // The fixed header; fails for anything but a sample file this reader knows.
  Result<void> ReadFileHeader(ByteReader& in);
  // The next chunk's header, its payload skipped; nullopt (with a warning)
  // at a torn or foreign end.
  std::optional<ChunkRef> NextChunk(ByteReader& in);
  Result<void> ReadMetadataChunk(const ChunkRef& ref);
  // Decodes a chunk in the key/value layout into `out`; a bad chunk becomes
  // a warning naming `what`.
  void AppendKeyValues(const ChunkRef& ref, uint64_t payload_offset, const char* what,
                       Metadata& out);
  // A kEmbeddedBinary, kPerfMap or kJitDump chunk into embedded_,
  // perf_maps_ or jit_dumps_; a bad one, or one over what is left of
  // budget_, becomes a warning and costs only itself.
  void ReadEmbeddedChunk(const ChunkRef& ref, uint64_t payload_offset);
  // A kJitDump part joined to its dump (the payload already checked).
  void AddJitDumpPart(const JitDumpPart& part, uint64_t chunk_offset);

  std::string path_;
  MappedFile file_;
  FileHeader file_header_{};
  uint64_t chunk_limit_ = kReaderMaxChunkRawSize;  // the most a chunk may claim
  EventTable events_;
  Metadata metadata_;
  Metadata build_ids_;
  std::string kernel_symbols_;
  std::string host_kallsyms_;
  Payload vdso_image_;
  EmbeddedBinaries embedded_;
  std::vector<RecordedPerfMap> perf_maps_;
  std::vector<RecordedJitDump> jit_dumps_;
  // pid -> index in jit_dumps_ of its latest dump, where its next parts
  // join (a search per part would be quadratic in a file of many parts).
  std::unordered_map<uint32_t, size_t> latest_jit_dump_;
  // What the embedded chunks may still take: set while Open scans.
  DecodeBudget* budget_ = nullptr;
  std::vector<ChunkRef> record_chunks_;
  std::optional<Counts> counts_;
  std::vector<ToggleEntry> toggles_;
  std::vector<ControlEntry> control_;
  std::vector<TraceFormatEntry> trace_formats_;
  std::optional<Trailer> trailer_;
  uint64_t valid_end_ = 0;
  std::vector<std::string> warnings_;
  RecordCounts other_records_;  // always empty
};

}  // namespace sample::format
