// PendingChunk: the records drained from the ring buffers since the last
// hand-over to the file writer, with what the writer's chunk header needs
// (record count, time range, which CPU's ring each part came from).
//
// Lives on the draining thread; its buffer is reused from the writer's
// spare buffers so that steady-state draining allocates nothing. Owns the
// bytes until Take() hands them over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/perf/perf_record.h"

namespace sample::record {

class PendingChunk {
 public:
  // `capacity`: what to reserve each time, so a drain never reallocates.
  // `cpu_field`, `sample_time_offset`: passed on to the writer (see
  // format::RecordsChunk).
  PendingChunk(size_t capacity, std::optional<CpuFieldPlace> cpu_field,
               uint32_t sample_time_offset);

  // The buffer to drain into: append at its end, then call Appended.
  std::vector<std::byte>& buffer() { return bytes_; }
  // Bytes from `before` to the end came from `cpu`'s ring buffer.
  void Appended(size_t before, uint32_t cpu);
  // One record of the appended bytes, with its time (0: none).
  void CountRecord(uint64_t time);

  bool empty() const { return bytes_.empty(); }
  size_t size() const { return bytes_.size(); }
  uint64_t records() const { return records_; }
  // The time range of the records so far; nullopt when none had a time.
  std::optional<std::pair<uint64_t, uint64_t>> time_range() const;

  // The chunk for the writer. The pending state stays as it was until
  // Reset; a hand-over the writer refused goes back with Restore.
  format::RecordsChunk Take();
  void Restore(format::RecordsChunk chunk);
  // Starts a new chunk in `spare` (a buffer the writer is done with, or
  // an empty one).
  void Reset(std::vector<std::byte> spare);

 private:
  size_t capacity_;
  std::optional<CpuFieldPlace> cpu_field_;
  uint32_t sample_time_offset_;
  std::vector<std::byte> bytes_;
  std::vector<format::CpuRun> cpus_;  // whose ring each part of bytes_ came from
  uint64_t records_ = 0;
  uint64_t time_min_ = UINT64_MAX;
  uint64_t time_max_ = 0;
};

}  // namespace sample::record
