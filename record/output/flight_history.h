// FlightHistory: --flight-recorder's memory. The records chunks the ring
// drainer hands over are kept here instead of being written, those of the
// last `span_ns` by record time; a chunk older than that is dropped
// whole, and so is the oldest while the chunks hold more than `byte_cap`
// bytes (a burst must not take the machine's memory).
//
// The sideband the kept samples need to be resolved (COMM, MMAP, MMAP2,
// FORK, EXIT, KSYMBOL, CGROUP, NAMESPACES: which process ran which file
// at which address) is taken out of a dropped chunk and kept for the
// whole recording, as is the /proc snapshot of running targets, so that a
// snapshot resolves as well as a normal recording. It grows with the
// processes and mappings created, not with time.
//
// Why memory rather than overwrite-mode kernel rings (perf's
// --overwrite): a ring in overwrite mode is as large as -m makes it
// (hundreds of KiB per CPU: well under a second at high rates, and its
// length in time depends on the rate), it overwrites the sideband with
// the samples, and it must be paused to be read. Drained as usual into
// memory, the history is measured in seconds whatever the rate, the
// sideband is kept apart, and nothing stops for a snapshot; the cost is
// the drain the recorder does anyway plus the history's bytes in memory.
// Whichever loses less: this one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/perf/perf_record.h"
#include "record/output/cpu_counters.h"

namespace sample::record {

// The byte cap for a history of `seconds`: 32 MiB a second (a 2-CPU -g
// recording at -F 4000 drains ~8 MiB/s), at least 64 MiB.
uint64_t FlightByteCap(double seconds);

class FlightHistory {
 public:
  // `attr`: the first event's (record times and the sample_id layout are
  // common to all events).
  FlightHistory(uint64_t span_ns, uint64_t byte_cap, const perf_event_attr& attr,
                std::optional<CpuFieldPlace> cpu_field);

  // Keeps a drained chunk; drops what is now older than the span.
  // Returns a dropped chunk's buffer for reuse, or an empty one.
  std::vector<std::byte> Add(format::RecordsChunk chunk);
  // Records kept whatever their age (the /proc snapshot of the targets).
  void AddSideband(const format::RecordsChunk& chunk);

  // The kept sideband as one chunk (empty records when none), and the
  // history's chunks, oldest first.
  const format::RecordsChunk& sideband() const { return sideband_; }
  const std::deque<format::RecordsChunk>& chunks() const { return chunks_; }
  // The history's counts per CPU run, for a snapshot's trailer: index i is
  // `cpus[i]`'s (the ring order); samples, losses and throttles.
  std::vector<CpuCounters> Count(const std::vector<int>& cpus) const;

  // Bytes held: the history's chunks, and the sideband.
  uint64_t chunk_bytes() const { return chunk_bytes_; }
  uint64_t sideband_bytes() const { return sideband_.records.size(); }
  // Chunks dropped by the byte cap while still inside the span.
  uint64_t capped_chunks() const { return capped_chunks_; }
  uint64_t byte_cap() const { return byte_cap_; }

 private:
  void KeepSideband(const format::RecordsChunk& chunk);
  // -d's mappings of data come and go (mmap, munmap, mmap again at the same
  // place) far more often than code's, and no munmap is recorded: once
  // they are many, only the last mapping at each (pid, start) is kept.
  void CompactDataMappings();

  uint64_t span_ns_;
  uint64_t byte_cap_;
  perf_event_attr attr_;
  std::deque<format::RecordsChunk> chunks_;
  format::RecordsChunk sideband_;
  uint64_t chunk_bytes_ = 0;
  uint64_t capped_chunks_ = 0;
  size_t data_mappings_ = 0;  // MMAP2 records without PROT_EXEC in sideband_
  size_t compact_data_at_ = 4096;
};

}  // namespace sample::record
