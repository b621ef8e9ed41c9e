#include "libsample/string_parts.h"
#include "record/output/rotating_output.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "record/output/flight_recorder.h"

namespace sample::record {
namespace {

// The number at the start of `text` and the suffix after it; nullopt
// when there is no number or it overflows.
std::optional<std::pair<uint64_t, std::string_view>> NumberAndSuffix(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return std::make_pair(value, text.substr(static_cast<size_t>(end - text.data())));
}

}  // namespace

Result<SwitchPolicy> ParseSwitchOutput(std::string_view text) {
  SwitchPolicy policy;
  if (text.empty() || text == "signal") {
    policy.kind = SwitchPolicy::Kind::kSignal;
    return policy;
  }
  const auto parsed = NumberAndSuffix(text);
  auto refuse = [&] {
    return Fail(fmt::format(
        "--switch-output '{}': give signal, a size (such as 100M: B, K, M or G) or a time (such "
        "as 30s: ms, s, m or h), above zero",
        text));
  };
  if (!parsed || parsed->first == 0) return refuse();
  const auto [value, suffix] = *parsed;
  struct Unit {
    std::string_view name;
    SwitchPolicy::Kind kind;
    uint64_t scale;
  };
  static constexpr Unit kUnits[] = {
      {"", SwitchPolicy::Kind::kSize, 1},
      {"B", SwitchPolicy::Kind::kSize, 1},
      {"K", SwitchPolicy::Kind::kSize, 1ull << 10},
      {"M", SwitchPolicy::Kind::kSize, 1ull << 20},
      {"G", SwitchPolicy::Kind::kSize, 1ull << 30},
      {"ms", SwitchPolicy::Kind::kTime, 1'000'000},
      {"s", SwitchPolicy::Kind::kTime, 1'000'000'000},
      {"m", SwitchPolicy::Kind::kTime, 60'000'000'000},
      {"h", SwitchPolicy::Kind::kTime, 3'600'000'000'000},
  };
  for (const Unit& unit : kUnits) {
    if (suffix != unit.name) continue;
    if (value > UINT64_MAX / unit.scale) return refuse();
    policy.kind = unit.kind;
    (unit.kind == SwitchPolicy::Kind::kSize ? policy.bytes : policy.time_ns) = value * unit.scale;
    return policy;
  }
  return refuse();
}

RotatingOutput::RotatingOutput(std::string output, SwitchPolicy policy,
                               format::WriterOptions writer, const perf_event_attr& attr,
                               std::optional<CpuFieldPlace> cpu_field, bool quiet)
    : output_(std::move(output)),
      policy_(policy),
      writer_options_(std::move(writer)),
      quiet_(quiet),
      sideband_(/*span_ns=*/0, /*byte_cap=*/0, attr, cpu_field) {}

Result<void> RotatingOutput::Open() {
  path_ = SnapshotPath(output_);
  TRY_ASSIGN(writer_, format::SampleFileWriter::Create(path_, writer_options_));
  // The first file's name; the later ones are said at each switch.
  if (!quiet_ && files_.empty() && total_bytes_ == 0) {
    fmt::print(stderr, "sample-record: recording to {} (--switch-output)\n", path_);
  }
  for (const MetadataChunk& chunk : metadata_) {
    writer_->Submit(chunk.type, chunk.payload, chunk.count);
  }
  records_ = 0;
  first_time_ = UINT64_MAX;
  last_time_ = 0;
  // What ran before this file, for its samples to resolve.
  format::RecordsChunk kept = sideband_.sideband();
  if (!kept.records.empty()) {
    if (kept.time_min == UINT64_MAX) kept.time_min = 0;
    records_ += kept.record_count;
    writer_->SubmitRecords(std::move(kept));
  }
  return {};
}

void RotatingOutput::AddMetadataChunk(format::ChunkType type, std::vector<std::byte> payload,
                                      uint64_t count) {
  if (writer_) writer_->Submit(type, payload, count);
  metadata_.push_back({type, std::move(payload), count});
}

std::vector<std::byte> RotatingOutput::Add(format::RecordsChunk chunk) {
  // After a failed switch there is no file: the recording is ending.
  if (!writer_) return {};
  sideband_.AddSideband(chunk);
  records_ += chunk.record_count;
  if (chunk.time_min != 0) first_time_ = std::min(first_time_, chunk.time_min);
  last_time_ = std::max(last_time_, chunk.time_max);
  writer_->SubmitRecords(std::move(chunk));
  return writer_->TakeSpareBuffer();
}

Result<RotatingOutput::File> RotatingOutput::Close(const Closing& closing,
                                                   const std::vector<CpuCounters>& counters) {
  if (!writer_) return Fail(fmt::format("{}: no file open (a switch failed)", output_));
  File file;
  file.path = path_;
  std::vector<CpuCounters> grown = counters;
  for (size_t i = 0; i < grown.size() && i < counters_at_open_.size(); ++i) {
    const CpuCounters& before = counters_at_open_[i];
    grown[i].samples -= before.samples;
    grown[i].lost_samples -= before.lost_samples;
    grown[i].lost_records -= before.lost_records;
    grown[i].dropped_samples -= before.dropped_samples;
    grown[i].throttles -= before.throttles;
  }
  counters_at_open_ = counters;
  file.trailer = MakeTrailer(grown);
  file.trailer.header.record_count = records_;
  if (first_time_ != UINT64_MAX) {
    file.trailer.header.start_clock_ns = first_time_;
    file.trailer.header.end_clock_ns = last_time_;
  }
  auto closed = closing(*writer_, file.trailer);
  file.bytes_written = writer_->bytes_written();
  file.raw_bytes = writer_->raw_bytes();
  writer_.reset();
  if (!closed) return Fail(fmt::format("{}: {}", path_, closed.error().message));
  total_bytes_ += file.bytes_written;
  total_raw_bytes_ += file.raw_bytes;
  files_.push_back(path_);
  while (policy_.max_files != 0 && files_.size() > policy_.max_files) {
    unlink(files_.front().c_str());
    if (!quiet_) fmt::print(stderr, "sample-record: removed {}\n", files_.front());
    files_.pop_front();
  }
  return file;
}

Result<void> RotatingOutput::Switch(const Closing& closing,
                                    const std::vector<CpuCounters>& counters, bool status_line) {
  TRY_ASSIGN(const File file, Close(closing, counters));
  TRY(Open());
  if (!quiet_) {
    if (status_line) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "sample-record: switched to {} ({}: {} samples, {})\n", path_, file.path,
               file.trailer.header.sample_count, HumanBytes(file.bytes_written));
  }
  return {};
}

Result<RotatingOutput::File> RotatingOutput::Finish(const Closing& closing,
                                                    const std::vector<CpuCounters>& counters) {
  return Close(closing, counters);
}

}  // namespace sample::record
