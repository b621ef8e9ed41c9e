// RotatingOutput: --switch-output's side of a recording. The records go to
// a file as usual, but the recording is cut into files, FILE.<local time>,
// each a complete recording that reports alone: at a switch the current
// file gets its closing chunks (build-ids, kernel symbols, what embedding
// stores) and its own trailer, and the next starts with the first chunks
// every file holds (events, host facts, control switches so far) and the
// sideband of everything before it (which process ran which file where:
// COMM, MMAP2, FORK... kept as the flight recorder keeps them), so its
// samples resolve as well as the first file's. A switch comes between two
// chunks: no record is in two files or in none. With --switch-max-files N
// the oldest files beyond N are deleted.
//
// Owns the current writer and the kept chunks; the closing chunks are the
// recorder's (Closing).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/result.h"
#include "record/output/flight_history.h"
#include "record/output/flight_recorder.h"
#include "record/output/cpu_counters.h"

namespace sample::record {

// --switch-output[=signal|SIZE|TIME] and --switch-max-files.
struct SwitchPolicy {
  enum class Kind { kNone, kSignal, kSize, kTime };
  Kind kind = Kind::kNone;
  uint64_t bytes = 0;    // kSize: switch once a file holds this many bytes
  uint64_t time_ns = 0;  // kTime: switch this often
  size_t max_files = 0;  // keep at most this many files; 0: all
};

// "signal" (also the empty text), a size ("100M", "512K", "2G", bytes
// without a suffix) or a time ("30s", "10m", "1h", "500ms"), as perf's
// --switch-output takes them; errors name the option.
Result<SwitchPolicy> ParseSwitchOutput(std::string_view text);

class RotatingOutput {
 public:
  // The flight recorder's: the chunks that close a file, and a file written.
  using Closing = FlightRecorder::Closing;
  using File = FlightRecorder::File;

  // `attr` and `cpu_field` as FlightHistory takes them.
  RotatingOutput(std::string output, SwitchPolicy policy, format::WriterOptions writer,
                 const perf_event_attr& attr, std::optional<CpuFieldPlace> cpu_field, bool quiet);

  // Opens the first file.
  Result<void> Open();
  // A chunk every file holds, written to the current one now.
  void AddMetadataChunk(format::ChunkType type, std::vector<std::byte> payload, uint64_t count);
  // A records chunk for the current file (its sideband kept for the next
  // ones); returns a buffer for the drainer's next chunk.
  std::vector<std::byte> Add(format::RecordsChunk chunk);

  const SwitchPolicy& policy() const { return policy_; }
  // The current file's bytes so far.
  uint64_t bytes_written() const { return writer_ ? writer_->bytes_written() : 0; }
  bool failed() const { return writer_ && writer_->failed(); }
  const format::SampleFileWriter* writer() const { return writer_.get(); }
  const std::string& current_path() const { return path_; }

  // Closes the current file with `closing` and opens the next, saying so
  // on stderr (after clearing a status line when `status_line`).
  // `counters`: the drainer's (per ring, since the start) once every
  // record drained is in the current file; each file's trailer counts
  // what they grew by while it was current.
  Result<void> Switch(const Closing& closing, const std::vector<CpuCounters>& counters,
                      bool status_line);
  // Closes the last file.
  Result<File> Finish(const Closing& closing, const std::vector<CpuCounters>& counters);
  // Every file closed so far and not deleted, oldest first.
  const std::deque<std::string>& files() const { return files_; }
  uint64_t total_bytes() const { return total_bytes_; }
  uint64_t total_raw_bytes() const { return total_raw_bytes_; }

 private:
  Result<File> Close(const Closing& closing, const std::vector<CpuCounters>& counters);

  std::string output_;
  SwitchPolicy policy_;
  format::WriterOptions writer_options_;
  bool quiet_;
  struct MetadataChunk {
    format::ChunkType type;
    std::vector<std::byte> payload;
    uint64_t count;
  };
  std::vector<MetadataChunk> metadata_;
  FlightHistory sideband_;  // only its kept sideband is used
  std::unique_ptr<format::SampleFileWriter> writer_;
  std::string path_;  // the current file
  // The drainer's counters when the current file opened; its records
  // and time range, for its trailer.
  std::vector<CpuCounters> counters_at_open_;
  uint64_t records_ = 0;
  uint64_t first_time_ = UINT64_MAX;
  uint64_t last_time_ = 0;
  std::deque<std::string> files_;
  uint64_t total_bytes_ = 0;
  uint64_t total_raw_bytes_ = 0;
};

}  // namespace sample::record
