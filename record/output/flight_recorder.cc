#include "libsample/string_parts.h"
#include "record/output/flight_recorder.h"

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "record/output/cpu_counters.h"

namespace sample::record {

std::string SnapshotPath(const std::string& output) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
  const std::string base = fmt::format("{}.{}.{:03}", output, stamp, now.tv_nsec / 1000000);
  std::string path = base;
  struct stat st {};
  for (int n = 1; lstat(path.c_str(), &st) == 0; ++n) path = fmt::format("{}.{}", base, n);
  return path;
}

FlightRecorder::FlightRecorder(double seconds, format::WriterOptions writer,
                               const perf_event_attr& attr, std::optional<CpuFieldPlace> cpu_field,
                               uint64_t byte_cap)
    : seconds_(seconds),
      writer_options_(std::move(writer)),
      history_(static_cast<uint64_t>(seconds * 1e9),
               byte_cap != 0 ? byte_cap : FlightByteCap(seconds), attr, cpu_field) {}

void FlightRecorder::AddMetadataChunk(format::ChunkType type, std::vector<std::byte> payload,
                                      uint64_t count) {
  metadata_.push_back({type, std::move(payload), count});
}

Result<FlightRecorder::File> FlightRecorder::Write(const std::string& path,
                                                   const std::vector<int>& cpus,
                                                   const Closing& closing) const {
  TRY_ASSIGN(auto writer, format::SampleFileWriter::Create(path, writer_options_));
  // The same chunks as a recording written as it goes: the first ones,
  // the sideband kept from before the history, the history, the closing
  // ones.
  for (const MetadataChunk& chunk : metadata_)
    writer->Submit(chunk.type, chunk.payload, chunk.count);
  File file;
  file.path = path;
  file.trailer = MakeTrailer(history_.Count(cpus));
  uint64_t records = 0, first = UINT64_MAX, last = 0;
  if (!history_.sideband().records.empty()) {
    format::RecordsChunk sideband = history_.sideband();
    if (sideband.time_min == UINT64_MAX) sideband.time_min = 0;
    records += sideband.record_count;
    writer->SubmitRecords(std::move(sideband));
  }
  for (const format::RecordsChunk& chunk : history_.chunks()) {
    records += chunk.record_count;
    if (chunk.time_min != 0) first = std::min(first, chunk.time_min);
    last = std::max(last, chunk.time_max);
    writer->SubmitRecords(chunk);  // a copy: the history stays for the next snapshot
  }
  file.trailer.header.record_count = records;
  if (first != UINT64_MAX) {
    file.trailer.header.start_clock_ns = first;
    file.trailer.header.end_clock_ns = last;
  }
  if (auto closed = closing(*writer, file.trailer); !closed) {
    return Fail(fmt::format("{}: {}", path, closed.error().message));
  }
  file.bytes_written = writer->bytes_written();
  file.raw_bytes = writer->raw_bytes();
  return file;
}

Result<FlightRecorder::File> FlightRecorder::Snapshot(const std::string& output,
                                                      const std::vector<int>& cpus,
                                                      const Closing& closing) {
  TRY_ASSIGN(auto file, Write(SnapshotPath(output), cpus, closing));
  ++snapshots_;
  return file;
}

void FlightRecorder::PrintCost() const {
  fmt::print(stderr,
             "sample-record: flight recorder: kept the last {} s in {} of memory (sideband "
             "{}, cap {}); {} snapshot(s) written before the end\n",
             seconds_, HumanBytes(history_.chunk_bytes()), HumanBytes(history_.sideband_bytes()),
             HumanBytes(history_.byte_cap()), snapshots_);
  if (history_.capped_chunks() > 0) {
    fmt::print(stderr,
               "sample-record: warning: the memory cap dropped {} chunk(s) younger than the "
               "window: snapshots hold less than {} s (use a shorter window or a lower -F)\n",
               history_.capped_chunks(), seconds_);
  }
}

}  // namespace sample::record
