// RecordingFile: what the reporter needs of a recording, whatever wrote it.
//
// Two formats implement it: our sample.data (SampleFileReader) and Linux
// perf's perf.data (PerfDataReader). Both hand out the recording's facts
// (events, host metadata, build-ids, kernel symbols) once opened, and its
// kernel records in chunks that are decoded on demand, possibly on several
// threads: each chunk is a run of kernel records exactly as the kernel
// wrote them for the file's event attributes, with its time range known
// before decoding so that records can be merged in time order
// (report/load/ordered_records.h). OpenRecording picks the reader by the file's
// magic.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/sample_file_format.h"
#include "libsample/perf/event_table.h"
#include "libsample/result.h"
#include "libsample/symbols/embedded_binary.h"
#include "libsample/symbols/jitdump.h"

namespace sample::format {

// A chunk of kernel records: where it starts in the file and what its
// header says (for perf.data, what the reader found when it scanned the
// file: raw_size, record_count, time_min and time_max).
struct ChunkRef {
  ChunkHeader header{};
  uint64_t offset = 0;  // of the chunk (its header, in sample.data) in the file
};

// A decompressed payload, 8-byte aligned so records can be viewed in place.
class Payload {
 public:
  Payload() = default;
  explicit Payload(size_t size) { Resize(size); }
  // Sets the size; keeps the capacity, so a reused payload does not touch
  // fresh memory (only growth is zero-filled).
  void Resize(size_t size) {
    words_.resize((size + 7) / 8);
    size_ = size;
  }
  std::span<std::byte> mutable_bytes() {
    return {reinterpret_cast<std::byte*>(words_.data()), size_};
  }
  std::span<const std::byte> bytes() const {
    return {reinterpret_cast<const std::byte*>(words_.data()), size_};
  }

 private:
  std::vector<uint64_t> words_;
  size_t size_ = 0;
};

// Records a reader met that are not kernel records and that the loader
// does not see (perf's own records, skipped ones), by name, for --stats.
using RecordCounts = std::vector<std::pair<std::string, uint64_t>>;

class RecordingFile {
 public:
  virtual ~RecordingFile() = default;

  virtual const std::string& path() const = 0;
  // "sample.data", "perf.data" or "perf.data (pipe mode)".
  virtual std::string format_name() const = 0;
  virtual const EventTable& events() const = 0;
  virtual const Metadata& metadata() const = 0;
  // Binary path -> GNU build-id (hex), as recorded.
  virtual const Metadata& build_ids() const = 0;
  // kallsyms-format text of the kernel symbols; may be empty.
  virtual std::string_view kernel_symbols() const = 0;
  // Besides: the path of this host's kernel symbol table (/proc/kallsyms)
  // when the recording was made on the running kernel and carries none
  // (a perf.data; FindPerfDataHostFacts), to be looked up for the sampled
  // addresses alone (KallsymsFeed); empty otherwise.
  virtual const std::string& host_kallsyms() const {
    static const std::string kNone;
    return kNone;
  }
  // The recording host's [vdso] ELF image; empty if not known.
  virtual std::span<const std::byte> vdso_image() const = 0;
  // What the recorder embedded of the binaries with samples (kEmbeddedBinary
  // chunks) and the JIT perf maps it copied (kPerfMap); empty for other
  // formats and for files from before embedding.
  virtual const EmbeddedBinaries& embedded_binaries() const = 0;
  virtual const std::vector<RecordedPerfMap>& perf_maps() const = 0;
  // The jitdumps it copied (kJitDump); empty for other formats.
  virtual const std::vector<RecordedJitDump>& jit_dumps() const = 0;
  // Facts only sample.data holds; empty (or nullopt) for other formats.
  virtual const std::optional<Counts>& counts() const = 0;
  virtual const std::vector<ToggleEntry>& toggles() const = 0;
  virtual const std::vector<ControlEntry>& control() const = 0;
  virtual const std::vector<TraceFormatEntry>& trace_formats() const = 0;
  virtual const std::optional<Trailer>& trailer() const = 0;
  // Chunks of kernel records, in file order.
  virtual const std::vector<ChunkRef>& record_chunks() const = 0;
  // The writer closed the file properly (else the records end where it died).
  virtual bool finalized() const = 0;
  virtual uint64_t file_size() const = 0;
  // Where reading stopped early (a torn or corrupt end), else file_size().
  virtual uint64_t valid_end() const = 0;
  // Problems found while opening: torn end, missing trailer, skipped parts.
  virtual const std::vector<std::string>& warnings() const = 0;
  // Records other than kernel records, counted while opening.
  virtual const RecordCounts& other_records() const = 0;

  // The chunk's kernel records into `out` (reusing its memory); errors name
  // the file and the chunk's offset, and leave `out` unspecified. Safe to
  // call from several threads.
  virtual Result<void> ReadPayloadInto(const ChunkRef& chunk, Payload& out) const = 0;
};

// Opens `path` with the reader its magic calls for: sample.data or
// perf.data (file or pipe mode); anything else is refused by name. "-"
// reads standard input (whole, into memory) as perf report -i - does.
// A sample.data file's embedded chunks are decoded within `budget`, which
// the files of a set share (nullptr: the file's own; decode_budget.h).
class DecodeBudget;
Result<std::unique_ptr<RecordingFile>> OpenRecording(const std::string& path,
                                                     DecodeBudget* budget = nullptr);

}  // namespace sample::format
