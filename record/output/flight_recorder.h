// FlightRecorder: --flight-recorder's side of a recording. Nothing is
// written while recording: the drained chunks go to its FlightHistory,
// and the metadata chunks (events, toggles, trace formats, host facts,
// then each control switch as it happens) are held here, since every file
// needs them whatever the history has dropped. Write makes a complete file
// of them all: a snapshot while recording (SIGUSR2 or the 'snapshot'
// command, to FILE.<local time>) or the output at the end. Owns the
// history and the metadata chunks; the chunks that close a file are the
// recorder's (Closing).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/sample_file_writer.h"
#include "libsample/perf/perf_record.h"
#include "libsample/result.h"
#include "record/output/flight_history.h"

namespace sample::record {

// Where a snapshot of `output` goes: FILE.20261124-061502.123 (local time,
// milliseconds), with .N after it when two fall in the same millisecond.
std::string SnapshotPath(const std::string& output);

class FlightRecorder {
 public:
  // Writes the chunks every file ends with (build-ids, vDSO, kernel
  // symbols, counts) and the trailer, and closes the writer.
  using Closing = std::function<Result<void>(format::SampleFileWriter&, const format::Trailer&)>;
  // A file written: where, its trailer and its sizes.
  struct File {
    std::string path;
    format::Trailer trailer;
    uint64_t bytes_written = 0;
    uint64_t raw_bytes = 0;
  };

  // `seconds`: --flight-recorder's; `writer`: every file's writer options;
  // `attr` and `cpu_field`: the first event's and where the CPU goes (as
  // FlightHistory takes them); `byte_cap`: the history's, 0 for
  // FlightByteCap(seconds).
  FlightRecorder(double seconds, format::WriterOptions writer, const perf_event_attr& attr,
                 std::optional<CpuFieldPlace> cpu_field, uint64_t byte_cap = 0);

  FlightHistory& history() { return history_; }
  const FlightHistory& history() const { return history_; }
  // A chunk every file holds: written once at the start, or as it happens
  // (a control switch).
  void AddMetadataChunk(format::ChunkType type, std::vector<std::byte> payload, uint64_t count);
  // Writes the metadata chunks, the kept sideband, the history and what
  // `closing` adds to `path`; `cpus`: the rings' CPUs, for the trailer.
  Result<File> Write(const std::string& path, const std::vector<int>& cpus,
                     const Closing& closing) const;
  // A snapshot while recording: Write to SnapshotPath(output), counted.
  Result<File> Snapshot(const std::string& output, const std::vector<int>& cpus,
                        const Closing& closing);
  // Bytes in memory: the history's chunks and the sideband.
  uint64_t held_bytes() const { return history_.chunk_bytes() + history_.sideband_bytes(); }
  // What the history cost and whether the byte cap shortened it, on
  // stderr at the end: what a user sizing --flight-recorder needs.
  void PrintCost() const;

 private:
  struct MetadataChunk {
    format::ChunkType type;
    std::vector<std::byte> payload;
    uint64_t count;
  };

  double seconds_;
  format::WriterOptions writer_options_;
  FlightHistory history_;
  std::vector<MetadataChunk> metadata_;
  uint64_t snapshots_ = 0;
};

}  // namespace sample::record
