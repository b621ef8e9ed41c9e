// RecordingSet: several recordings read as one (sample-report -i A B ...,
// a day of --switch-output files or flight-recorder snapshots). Each file
// is opened with its own reader; the set's record chunks are all of
// theirs (OrderedRecordStream orders them by time across files), and what
// the files say beside their records is joined: the first file's events,
// with every file's sample ids added to the event they match (the same
// name and attributes, in the same order: files of other events are
// refused by name); build-ids, kernel symbols, perf maps and jitdumps of
// all; what each embedded of a binary (the functions with samples in that
// file) merged per binary and build; the trailers' counts summed. The
// files stay open (mapped) as long as the set.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/recording_file.h"

namespace sample::format {

class RecordingSet final : public RecordingFile {
 public:
  // At least two files; errors name the file.
  static Result<std::unique_ptr<RecordingSet>> Open(const std::vector<std::string>& paths);

  const std::string& path() const override { return name_; }
  std::string format_name() const override { return files_.front()->format_name(); }
  const EventTable& events() const override { return events_; }
  const Metadata& metadata() const override { return files_.front()->metadata(); }
  const Metadata& build_ids() const override { return build_ids_; }
  std::string_view kernel_symbols() const override { return kernel_symbols_; }
  // The first file's that has one: every file that has one runs on this
  // host's kernel.
  const std::string& host_kallsyms() const override { return host_kallsyms_; }
  std::span<const std::byte> vdso_image() const override;
  const EmbeddedBinaries& embedded_binaries() const override { return embedded_; }
  const std::vector<RecordedPerfMap>& perf_maps() const override { return perf_maps_; }
  const std::vector<RecordedJitDump>& jit_dumps() const override { return jit_dumps_; }
  // The last file's: a rotated recording's counters are totals since its
  // start, so the last file's cover them all.
  const std::optional<Counts>& counts() const override { return files_.back()->counts(); }
  const std::vector<ToggleEntry>& toggles() const override { return files_.front()->toggles(); }
  const std::vector<ControlEntry>& control() const override { return control_; }
  const std::vector<TraceFormatEntry>& trace_formats() const override {
    return files_.front()->trace_formats();
  }
  const std::optional<Trailer>& trailer() const override { return trailer_; }
  const std::vector<ChunkRef>& record_chunks() const override { return chunks_; }
  bool finalized() const override { return finalized_; }
  uint64_t file_size() const override { return file_size_; }
  uint64_t valid_end() const override { return valid_end_; }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  const RecordCounts& other_records() const override { return other_records_; }
  // A chunk of record_chunks(): read by the file it came from.
  Result<void> ReadPayloadInto(const ChunkRef& chunk, Payload& out) const override;

 private:
  RecordingSet() = default;
  Result<void> JoinEvents();
  void JoinFacts();

  std::string name_;
  std::vector<std::unique_ptr<RecordingFile>> files_;
  EventTable events_;
  Metadata build_ids_;
  std::string kernel_symbols_;
  std::string host_kallsyms_;
  EmbeddedBinaries embedded_;
  std::vector<RecordedPerfMap> perf_maps_;
  std::vector<RecordedJitDump> jit_dumps_;
  std::vector<ControlEntry> control_;
  std::optional<Trailer> trailer_;
  std::vector<ChunkRef> chunks_;      // every file's, in file order
  std::vector<uint32_t> chunk_file_;  // parallel: whose
  std::vector<ChunkRef> file_refs_;   // parallel: the ref as its file knows it
  bool finalized_ = true;
  uint64_t file_size_ = 0;
  uint64_t valid_end_ = 0;
  std::vector<std::string> warnings_;
  RecordCounts other_records_;
};

// One path: OpenRecording's reader; several: a RecordingSet.
Result<std::unique_ptr<RecordingFile>> OpenRecordings(const std::vector<std::string>& paths);

}  // namespace sample::format
