// DataWalker: the records of a perf.data data section (perf_data_format.h),
// one top-level record a step, with perf record -z's compressed records
// inflated on the way. Used twice by PerfDataReader: once to scan the file
// (where chunks may be cut: aligned()), and once per chunk to decode it.
// Owns its zstd stream and the start of a record split between compressed
// records. Every size is checked against what is left; a compressed stream
// may expand to at most kMaxCompressionRatio times its input beyond its
// first MiB (sample_file_format.h), so crafted input cannot balloon it.
#pragma once

#include <linux/perf_event.h>
#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "formats/perf_data_format.h"
#include "formats/sample_file_format.h"

namespace sample::format::perf_data {

inline perf_event_header HeaderAt(const std::byte* p) {
  perf_event_header h;
  std::memcpy(&h, p, sizeof(h));
  return h;
}

// Walks the records from `begin` to `end` of `file`: a kernel record goes
// to `kernel`, a compressed record's payload is inflated and every whole
// record it completes goes to `kernel` (or `user`, for perf's own), and
// perf's records go to `user` with their offset.
class DataWalker {
 public:
  DataWalker(std::span<const std::byte> file, uint64_t begin, uint64_t end, bool zstd)
      : file_(file), pos_(begin), end_(end), zstd_(zstd) {}

  // False at the end, or when the walk cannot go on: problem() says why,
  // position() is where.
  template <typename Kernel, typename User>
  bool Step(Kernel&& kernel, User&& user) {
    if (pos_ >= end_ || !problem_.empty()) return false;
    if (end_ - pos_ < sizeof(perf_event_header)) {
      problem_ = fmt::format("offset {}: {} bytes left, too few for a record", pos_, end_ - pos_);
      return false;
    }
    const perf_event_header h = HeaderAt(file_.data() + pos_);
    if (h.size < sizeof(h) || h.size > end_ - pos_) {
      problem_ = fmt::format("offset {}: a record of type {} claims {} bytes, {} are left", pos_,
                             h.type, h.size, end_ - pos_);
      return false;
    }
    const auto record = file_.subspan(pos_, h.size);
    uint64_t next = pos_ + h.size;
    if (h.type < kUserTypeStart) {
      if (h.size % 8 == 0) {
        kernel(record);
      } else {
        user(h, record, pos_);  // counted as malformed
      }
    } else if ((h.type == kCompressedRecord || h.type == kCompressed2Record) && zstd_) {
      std::span<const std::byte> payload = record.subspan(sizeof(h));
      if (h.type == kCompressed2Record) {
        uint64_t size = 0;
        if (payload.size() >= 8) std::memcpy(&size, payload.data(), 8);
        if (payload.size() < 8 || size > payload.size() - 8) {
          problem_ = fmt::format("offset {}: COMPRESSED2 record claims {} bytes of data", pos_, size);
          return false;
        }
        payload = payload.subspan(8, size);
      }
      ++compressed_records_;
      if (!Inflate(payload, kernel, user)) return false;
    } else {
      // Two of perf's records are followed by data their size leaves out.
      uint64_t extra = 0;  // AUXTRACE's trace, HEADER_TRACING_DATA's formats
      if (h.type == kAuxtraceRecord && h.size >= 16) {
        std::memcpy(&extra, record.data() + 8, 8);
      } else if (h.type == kHeaderTracingData && h.size >= 12) {
        uint32_t size;
        std::memcpy(&size, record.data() + 8, 4);
        extra = (uint64_t{size} + 7) & ~uint64_t{7};
      }
      if (extra > end_ - next) {
        problem_ = fmt::format("offset {}: a record of type {} is followed by {} bytes of data, {} "
                               "are left",
                               pos_, h.type, extra, end_ - next);
        return false;
      }
      user(h, record, pos_);
      next += extra;
    }
    pos_ = next;
    return true;
  }

  uint64_t position() const { return pos_; }
  // Between zstd frames with no record split: a fresh stream can start here.
  bool aligned() const { return !in_frame_ && carry_.empty(); }
  const std::string& problem() const { return problem_; }
  uint64_t compressed_records() const { return compressed_records_; }

 private:
  template <typename Kernel, typename User>
  bool Inflate(std::span<const std::byte> input, Kernel& kernel, User& user) {
    if (!stream_) {
      stream_.reset(ZSTD_createDStream());
      if (!stream_) {
        problem_ = "out of memory for a zstd stream";
        return false;
      }
    }
    compressed_in_ += input.size();
    ZSTD_inBuffer in{input.data(), input.size(), 0};
    window_.resize(kInflateWindow);
    for (;;) {
      ZSTD_outBuffer out{window_.data(), window_.size(), 0};
      const size_t left = ZSTD_decompressStream(stream_.get(), &out, &in);
      if (ZSTD_isError(left)) {
        problem_ = fmt::format("offset {}: compressed record: {}", pos_, ZSTD_getErrorName(left));
        return false;
      }
      in_frame_ = left != 0;
      expanded_ += out.pos;
      if (expanded_ > kRatioFreeRawSize + kMaxCompressionRatio * compressed_in_) {
        problem_ = fmt::format("offset {}: compressed records expand to more than {} times their "
                               "size (a damaged or crafted file)",
                               pos_, kMaxCompressionRatio);
        return false;
      }
      carry_.insert(carry_.end(), window_.begin(), window_.begin() + out.pos);
      size_t at = 0;
      while (carry_.size() - at >= sizeof(perf_event_header)) {
        const perf_event_header h = HeaderAt(carry_.data() + at);
        if (h.size < sizeof(h)) {
          problem_ = fmt::format("offset {}: a compressed record holds a record of {} bytes", pos_,
                                 h.size);
          return false;
        }
        if (h.size > carry_.size() - at) break;  // completed by the next output
        const std::span<const std::byte> record(carry_.data() + at, h.size);
        if (h.type < kUserTypeStart && h.size % 8 == 0) {
          kernel(record);
        } else {
          user(h, record, pos_);
        }
        at += h.size;
      }
      carry_.erase(carry_.begin(), carry_.begin() + static_cast<ptrdiff_t>(at));
      if (in.pos == in.size && out.pos < out.size) return true;
    }
  }

  struct DStreamDeleter {
    void operator()(ZSTD_DStream* s) const { ZSTD_freeDStream(s); }
  };
  static constexpr size_t kInflateWindow = size_t{256} << 10;  // zstd output per call

  std::span<const std::byte> file_;
  uint64_t pos_;
  uint64_t end_;
  bool zstd_;
  std::unique_ptr<ZSTD_DStream, DStreamDeleter> stream_;
  bool in_frame_ = false;
  uint64_t compressed_records_ = 0;
  uint64_t compressed_in_ = 0;
  uint64_t expanded_ = 0;
  std::vector<std::byte> window_;
  std::vector<std::byte> carry_;  // the start of a record the next output completes
  std::string problem_;
};

}  // namespace sample::format::perf_data
