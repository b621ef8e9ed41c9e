#include "record/output/flight_sink.h"

#include <cstdio>

#include <fmt/format.h>

#include "libsample/regular_file.h"
#include "libsample/string_parts.h"

namespace sample::record {

FlightSink::FlightSink(std::string output, double seconds, bool quiet,
                       std::optional<LiveHooks> live)
    : OutputSink(std::move(output)), seconds_(seconds), quiet_(quiet), live_(std::move(live)) {}

Result<void> FlightSink::Open(const SinkStart& start) {
  flight_.emplace(seconds_, writer_options_, start.first_attr, start.cpu_field,
                  live_ ? live_->history_byte_cap : 0);
  if (live_ && live_->opened) live_->opened(start.events);
  return {};
}

void FlightSink::AddMetadata(format::ChunkType type, std::vector<std::byte> payload,
                             uint64_t count) {
  flight_->AddMetadataChunk(type, std::move(payload), count);
}

void FlightSink::AddRunningTargets(format::RecordsChunk chunk) {
  if (live_ && live_->chunk) live_->chunk(chunk);
  flight_->history().AddSideband(chunk);
}

bool FlightSink::AddRecords(format::RecordsChunk& chunk, bool, std::vector<std::byte>* spare) {
  if (live_ && live_->chunk) live_->chunk(chunk);
  *spare = flight_->history().Add(std::move(chunk));
  return true;
}

CutPolicy FlightSink::cut_policy() const {
  return CutPolicy{.kind = CutPolicy::Kind::kSnapshot, .on_signal = true};
}

Result<void> FlightSink::Cut(const CloseFile& close, const DrainTotals& totals, bool status_line) {
  TRY_ASSIGN(auto file, flight_->Snapshot(output_, totals.cpus, close));
  if (live_ && live_->snapshot) live_->snapshot(file.path, file.trailer.header.sample_count);
  if (!quiet_ && !live_) {
    if (status_line) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "sample-record: snapshot: {} ({} samples, {})\n", file.path,
               file.trailer.header.sample_count, HumanBytes(file.bytes_written));
  }
  return {};
}

void FlightSink::SayCutFailed(const std::string& message) const {
  if (live_ && live_->snapshot_failed) {
    live_->snapshot_failed(message);
  } else {
    fmt::print(stderr, "sample-record: snapshot: {}\n", message);
  }
}

std::string FlightSink::Held() const {
  return fmt::format("{} in memory", HumanBytes(flight_->held_bytes()));
}

Result<SinkEnd> FlightSink::Finish(const CloseFile& close, const DrainTotals& totals) {
  SinkEnd end;
  if (live_) {
    // A live view's recorder keeps what it saved and writes nothing more.
    end.trailer = MakeTrailer(totals.counters);
    end.wrote_files = false;
    return end;
  }
  // The end's snapshot is the output file itself.
  TRY(MoveAside(output_, "-o"));
  TRY_ASSIGN(auto file, flight_->Write(output_, totals.cpus, close));
  end.trailer = file.trailer;
  end.bytes_written = file.bytes_written;
  end.raw_bytes = file.raw_bytes;
  return end;
}

void FlightSink::PrintCost() const {
  if (flight_) flight_->PrintCost();
}

}  // namespace sample::record
