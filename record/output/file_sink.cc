#include "record/output/file_sink.h"

#include <unistd.h>

#include <fmt/format.h>

#include "libsample/regular_file.h"
#include "libsample/string_parts.h"

namespace sample::record {

Result<void> FileSink::Open(const SinkStart&) {
  TRY(MoveAside(output_, "-o"));
  TRY_ASSIGN(writer_, format::SampleFileWriter::Create(output_, writer_options_));
  return {};
}

void FileSink::AddMetadata(format::ChunkType type, std::vector<std::byte> payload,
                           uint64_t count) {
  writer_->Submit(type, std::move(payload), count);
}

void FileSink::AddRunningTargets(format::RecordsChunk chunk) {
  writer_->SubmitRecords(std::move(chunk));
}

bool FileSink::AddRecords(format::RecordsChunk& chunk, bool wait, std::vector<std::byte>* spare) {
  if (!wait) return writer_->TrySubmitRecords(chunk, spare);
  writer_->SubmitRecords(std::move(chunk));
  *spare = writer_->TakeSpareBuffer();
  return true;
}

std::string FileSink::Held() const {
  return fmt::format("{} written", HumanBytes(writer_->bytes_written()));
}

void FileSink::SetWriterNice(int nice) { writer_->SetThreadNice(nice); }

Result<SinkEnd> FileSink::Finish(const CloseFile& close, const DrainTotals& totals) {
  SinkEnd end;
  end.trailer = MakeTrailer(totals.counters);
  end.trailer.header.record_count = totals.records_written;
  if (totals.time_range) {
    end.trailer.header.start_clock_ns = totals.time_range->first;
    end.trailer.header.end_clock_ns = totals.time_range->second;
  }
  if (auto finished = close(*writer_, end.trailer); !finished) {
    // The recording stopped at the failed write; the chunks written
    // before it are whole, and the reader recovers them.
    return Fail(
        fmt::format("{}: {}; recording stopped after {:.2f} s, {} written before the failure stay "
                    "readable (not finalized)",
                    output_, finished.error().message, totals.seconds,
                    HumanBytes(writer_->bytes_written())));
  }
  finished_ = true;
  end.bytes_written = writer_->bytes_written();
  end.raw_bytes = writer_->raw_bytes();  // complete once Finish has written everything
  return end;
}

void FileSink::Discard(bool started) {
  if (!writer_ || (started && finished_)) return;
  writer_.reset();
  unlink(output_.c_str());
}

}  // namespace sample::record
