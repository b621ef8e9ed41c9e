// FlightSink: --flight-recorder's output, the last seconds held in memory
// (FlightRecorder): a snapshot file, FILE.<date-time>, at SIGUSR2 or the
// 'snapshot' control command, and the output file at the end.
//
// With LiveHooks it is sample-top's feed: every chunk is handed over as it
// is drained (the history kept for the s key's snapshots), and the end
// writes no file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "record/output/flight_recorder.h"
#include "record/output/record_sink.h"

namespace sample::record {

// What a program running the recorder in its own process (sample-top) is
// handed. Every hook runs on the recorder's thread.
struct LiveHooks {
  // Once the events are open and before sampling starts: their
  // descriptions, as a file's kEvents chunk holds them (the records that
  // `chunk` gets are parsed with them once their CPU fields are in).
  std::function<void(const std::vector<EventDesc>& events)> opened;
  // Each records chunk as drained, the /proc description of targets that
  // were running before the recording first.
  std::function<void(const format::RecordsChunk& chunk)> chunk;
  // A snapshot was written: where, and its samples.
  std::function<void(const std::string& path, uint64_t samples)> snapshot;
  // A snapshot failed: why (said here instead of on stderr).
  std::function<void(const std::string& error)> snapshot_failed;
  // How old a chunk gets before it is handed over; 0: the recorder's own.
  uint64_t chunk_max_age_ns = 0;
  // The flight history's byte cap; 0: FlightByteCap(seconds).
  uint64_t history_byte_cap = 0;
};

class FlightSink final : public OutputSink {
 public:
  // `output`: -o's path, of the end's file and the snapshots' names;
  // `seconds`: how long the history holds; `quiet`: no snapshot lines;
  // `live`: sample-top's hooks.
  FlightSink(std::string output, double seconds, bool quiet, std::optional<LiveHooks> live);

  Result<void> Open(const SinkStart& start) override;
  void AddMetadata(format::ChunkType type, std::vector<std::byte> payload,
                   uint64_t count) override;
  void AddRunningTargets(format::RecordsChunk chunk) override;
  bool AddRecords(format::RecordsChunk& chunk, bool wait, std::vector<std::byte>* spare) override;
  CutPolicy cut_policy() const override;
  Result<void> Cut(const CloseFile& close, const DrainTotals& totals, bool status_line) override;
  void SayCutFailed(const std::string& message) const override;
  uint64_t chunk_max_age_ns() const override { return live_ ? live_->chunk_max_age_ns : 0; }
  bool failed() const override { return false; }
  std::string Held() const override;
  Result<SinkEnd> Finish(const CloseFile& close, const DrainTotals& totals) override;
  void Discard(bool /*started*/) override {}
  void PrintCost() const override;

 private:
  double seconds_;
  bool quiet_;
  std::optional<LiveHooks> live_;
  std::optional<FlightRecorder> flight_;
};

}  // namespace sample::record
