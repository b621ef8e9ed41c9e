// RotatingSink: --switch-output's files, each complete and readable alone
// (RotatingOutput): the current one closed and the next, FILE.<date-time>,
// opened at SIGUSR2, once it holds SIZE bytes or every TIME.
#pragma once

#include <optional>
#include <string>

#include "record/output/record_sink.h"
#include "record/output/rotating_output.h"

namespace sample::record {

class RotatingSink final : public OutputSink {
 public:
  // `output`: -o's path, the files' names' stem; `quiet`: no lines.
  RotatingSink(std::string output, SwitchPolicy policy, bool quiet);

  Result<void> Open(const SinkStart& start) override;
  void AddMetadata(format::ChunkType type, std::vector<std::byte> payload,
                   uint64_t count) override;
  void AddRunningTargets(format::RecordsChunk chunk) override;
  bool AddRecords(format::RecordsChunk& chunk, bool wait, std::vector<std::byte>* spare) override;
  CutPolicy cut_policy() const override;
  Result<void> Cut(const CloseFile& close, const DrainTotals& totals, bool status_line) override;
  uint64_t current_bytes() const override { return rotating_ ? rotating_->bytes_written() : 0; }
  bool failed() const override { return rotating_ && rotating_->failed(); }
  std::string Held() const override;
  Result<SinkEnd> Finish(const CloseFile& close, const DrainTotals& totals) override;
  void Discard(bool started) override;

 private:
  SwitchPolicy policy_;
  bool quiet_;
  std::optional<RotatingOutput> rotating_;
};

}  // namespace sample::record
