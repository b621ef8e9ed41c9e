// FileSink: the recording written into one file as it goes (sample-record
// without --flight-recorder or --switch-output): a SampleFileWriter whose
// thread compresses and writes each chunk handed over.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "record/output/record_sink.h"

namespace sample::record {

class FileSink final : public OutputSink {
 public:
  // `output`: -o's path.
  explicit FileSink(std::string output) : OutputSink(std::move(output)) {}

  Result<void> Open(const SinkStart& start) override;
  void AddMetadata(format::ChunkType type, std::vector<std::byte> payload,
                   uint64_t count) override;
  void AddRunningTargets(format::RecordsChunk chunk) override;
  bool AddRecords(format::RecordsChunk& chunk, bool wait, std::vector<std::byte>* spare) override;
  bool failed() const override { return writer_ && writer_->failed(); }
  std::string Held() const override;
  void SetWriterNice(int nice) override;
  Result<SinkEnd> Finish(const CloseFile& close, const DrainTotals& totals) override;
  void Discard(bool started) override;

 private:
  std::unique_ptr<format::SampleFileWriter> writer_;
  bool finished_ = false;
};

}  // namespace sample::record
