// RecordSink: where a recording's chunks go. The recorder and its loop
// write into this one interface and never ask which output it is:
//
//   FileSink      one sample.data file, written as the recording goes
//                 (file_sink.h)
//   FlightSink    the last seconds in memory (--flight-recorder): a
//                 snapshot file at SIGUSR2 or the 'snapshot' command, the
//                 output file at the end; with LiveHooks, sample-top's
//                 feed, every chunk handed over as drained and no file at
//                 the end (flight_sink.h)
//   RotatingSink  complete files, FILE.<date-time>, cut at SIGUSR2, a size
//                 or a time (--switch-output; rotating_sink.h)
//
// What differs between them that the loop must act on is data: CutPolicy
// says what SIGUSR2 and the 'snapshot' command do and when the sink wants
// a cut by itself.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/event_table.h"
#include "libsample/regular_file.h"
#include "libsample/result.h"
#include "record/output/cpu_counters.h"

namespace sample::record {

// What a cut of the output is, and when it happens.
struct CutPolicy {
  enum class Kind {
    kNone,      // no cuts: SIGUSR2 is left alone
    kSnapshot,  // a file of what is held, recording goes on; a failure is said
    kNextFile,  // the current file closed, the next opened; a failure ends the recording
  };
  Kind kind = Kind::kNone;
  bool on_signal = false;   // SIGUSR2 cuts (kSnapshot: and the 'snapshot' command)
  uint64_t every_ns = 0;    // a cut every this long; 0: none
  uint64_t at_bytes = 0;    // a cut once the current file holds this much; 0: none
};

// Known once the events are open.
struct SinkStart {
  const perf_event_attr& first_attr;  // the first event's: time and trailer layout
  std::optional<CpuFieldPlace> cpu_field;
  std::vector<EventDesc> events;  // as the file's kEvents chunk holds them
};

// What the recording drained, for a trailer.
struct DrainTotals {
  const std::vector<CpuCounters>& counters;  // per ring
  uint64_t records_written = 0;
  std::optional<std::pair<uint64_t, uint64_t>> time_range;
  const std::vector<int>& cpus;  // each ring's CPU
  double seconds = 0;            // since the events went on
};

// Writes the chunks every file ends with (build-ids, vDSO, kernel
// symbols, counts) and the trailer, and closes the writer.
using CloseFile = std::function<Result<void>(format::SampleFileWriter&, const format::Trailer&)>;

// What the end wrote.
struct SinkEnd {
  format::Trailer trailer;     // the whole recording's, for the summary
  uint64_t bytes_written = 0;  // compressed, on disk
  uint64_t raw_bytes = 0;
  std::string written_to;  // what the summary names; empty: the output file
  bool wrote_files = true;  // false for sample-top's feed
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;

  // Before anything runs: the output that will be written is checked and,
  // for a file written as the recording goes, created. `writer`: every
  // file's writer options.
  virtual Result<void> Prepare(const format::WriterOptions& writer) = 0;
  // Once the events are open, before the first chunk.
  virtual Result<void> Open(const SinkStart& start) = 0;
  // A chunk every file holds: written once at the start (events, host
  // facts) or as it happens (a control switch).
  virtual void AddMetadata(format::ChunkType type, std::vector<std::byte> payload,
                           uint64_t count) = 0;
  // The /proc description of the targets that ran before the recording.
  virtual void AddRunningTargets(format::RecordsChunk chunk) = 0;
  // Records drained from the rings. With `wait` false never blocks: false
  // when the chunk cannot be taken now (it stays the caller's). Taken,
  // `spare` gets a buffer to build the next chunk in (possibly empty).
  virtual bool AddRecords(format::RecordsChunk& chunk, bool wait,
                          std::vector<std::byte>* spare) = 0;

  virtual CutPolicy cut_policy() const { return {}; }
  // A cut (CutPolicy), every record drained so far in the sink.
  // `status_line`: a status line is on stderr, to clear before a message.
  virtual Result<void> Cut(const CloseFile& /*close*/, const DrainTotals& /*totals*/,
                           bool /*status_line*/) {
    return {};
  }
  // A kSnapshot cut failed: said (on stderr, or to sample-top).
  virtual void SayCutFailed(const std::string& /*message*/) const {}
  // The current file's bytes so far (for CutPolicy::at_bytes).
  virtual uint64_t current_bytes() const { return 0; }
  // How old a chunk gets before it is handed over; 0: the loop's own.
  virtual uint64_t chunk_max_age_ns() const { return 0; }

  // A write failed (a full disk): recording more would only lose it.
  virtual bool failed() const = 0;
  // The status line's "12.0 MiB written", "3.1 MiB in memory".
  virtual std::string Held() const = 0;
  // The draining thread's nice, for the sink's writer thread.
  virtual void SetWriterNice(int /*nice*/) {}

  // The end: everything held written, closed with `close`.
  virtual Result<SinkEnd> Finish(const CloseFile& close, const DrainTotals& totals) = 0;
  // After a failure: what is incomplete removed (`started`: recording had
  // begun, and what Finish kept stays).
  virtual void Discard(bool started) = 0;
  // What holding the recording cost, on stderr after the summary.
  virtual void PrintCost() const {}
};

// What every sink writing -o's file shares: the path, checked before
// anything runs (refused at the end, when the file is written, it would
// lose the whole run), and the writer's options for the files it writes.
class OutputSink : public RecordSink {
 public:
  Result<void> Prepare(const format::WriterOptions& writer) final {
    TRY(CheckReplaceable(output_, "-o"));
    writer_options_ = writer;
    return {};
  }

 protected:
  explicit OutputSink(std::string output) : output_(std::move(output)) {}

  const std::string output_;
  format::WriterOptions writer_options_;
};

}  // namespace sample::record
