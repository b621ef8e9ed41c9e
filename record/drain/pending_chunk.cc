#include "record/drain/pending_chunk.h"

#include <algorithm>

namespace sample::record {

PendingChunk::PendingChunk(size_t capacity, std::optional<CpuFieldPlace> cpu_field,
                           uint32_t sample_time_offset)
    : capacity_(capacity), cpu_field_(cpu_field), sample_time_offset_(sample_time_offset) {
  bytes_.reserve(capacity_);
}

void PendingChunk::Appended(size_t before, uint32_t cpu) {
  if (bytes_.size() == before) return;
  if (!cpus_.empty() && cpus_.back().cpu == cpu) {
    cpus_.back().end = bytes_.size();
  } else {
    cpus_.push_back({bytes_.size(), cpu});
  }
}

void PendingChunk::CountRecord(uint64_t time) {
  ++records_;
  if (time != 0) {
    time_min_ = std::min(time_min_, time);
    time_max_ = std::max(time_max_, time);
  }
}

std::optional<std::pair<uint64_t, uint64_t>> PendingChunk::time_range() const {
  if (time_min_ == UINT64_MAX) return std::nullopt;
  return std::pair{time_min_, time_max_};
}

format::RecordsChunk PendingChunk::Take() {
  format::RecordsChunk chunk;
  chunk.record_count = records_;
  chunk.time_min = time_min_ == UINT64_MAX ? 0 : time_min_;
  chunk.time_max = time_max_;
  chunk.sample_time_offset = sample_time_offset_;
  chunk.cpu_field = cpu_field_;
  chunk.cpu_runs = std::move(cpus_);  // the writer ignores them without cpu_field
  chunk.records = std::move(bytes_);
  cpus_.clear();
  bytes_.clear();
  return chunk;
}

void PendingChunk::Restore(format::RecordsChunk chunk) {
  bytes_ = std::move(chunk.records);
  cpus_ = std::move(chunk.cpu_runs);
}

void PendingChunk::Reset(std::vector<std::byte> spare) {
  bytes_ = std::move(spare);
  bytes_.clear();
  bytes_.reserve(capacity_);
  cpus_.clear();
  records_ = 0;
  time_min_ = UINT64_MAX;
  time_max_ = 0;
}

}  // namespace sample::record
