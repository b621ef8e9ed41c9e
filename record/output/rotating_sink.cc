#include "record/output/rotating_sink.h"

#include <unistd.h>

#include <fmt/format.h>

#include "libsample/regular_file.h"
#include "libsample/string_parts.h"

namespace sample::record {

RotatingSink::RotatingSink(std::string output, SwitchPolicy policy, bool quiet)
    : OutputSink(std::move(output)), policy_(policy), quiet_(quiet) {}

Result<void> RotatingSink::Open(const SinkStart& start) {
  rotating_.emplace(output_, policy_, writer_options_, start.first_attr,
                    start.cpu_field, quiet_);
  return rotating_->Open();
}

void RotatingSink::AddMetadata(format::ChunkType type, std::vector<std::byte> payload,
                               uint64_t count) {
  rotating_->AddMetadataChunk(type, std::move(payload), count);
}

void RotatingSink::AddRunningTargets(format::RecordsChunk chunk) { rotating_->Add(std::move(chunk)); }

bool RotatingSink::AddRecords(format::RecordsChunk& chunk, bool, std::vector<std::byte>* spare) {
  *spare = rotating_->Add(std::move(chunk));
  return true;
}

CutPolicy RotatingSink::cut_policy() const {
  const SwitchPolicy& policy = policy_;
  CutPolicy cut{.kind = CutPolicy::Kind::kNextFile};
  cut.on_signal = policy.kind == SwitchPolicy::Kind::kSignal;
  if (policy.kind == SwitchPolicy::Kind::kTime) cut.every_ns = policy.time_ns;
  if (policy.kind == SwitchPolicy::Kind::kSize) cut.at_bytes = policy.bytes;
  return cut;
}

Result<void> RotatingSink::Cut(const CloseFile& close, const DrainTotals& totals,
                               bool status_line) {
  return rotating_->Switch(close, totals.counters, status_line);
}

std::string RotatingSink::Held() const {
  return fmt::format("{} written", HumanBytes(rotating_->total_bytes() + rotating_->bytes_written()));
}

Result<SinkEnd> RotatingSink::Finish(const CloseFile& close, const DrainTotals& totals) {
  TRY(rotating_->Finish(close, totals.counters));
  SinkEnd end;
  end.trailer = MakeTrailer(totals.counters);  // the whole recording's, for the summary
  end.bytes_written = rotating_->total_bytes();
  end.raw_bytes = rotating_->total_raw_bytes();
  const auto& files = rotating_->files();
  end.written_to = files.size() == 1 ? files.front()
                                     : fmt::format("{} files, {} to {}", files.size(),
                                                   files.front(), files.back());
  return end;
}

void RotatingSink::Discard(bool started) {
  if (started || !rotating_) return;
  const std::string path = rotating_->current_path();
  rotating_.reset();
  unlink(path.c_str());
}

}  // namespace sample::record
