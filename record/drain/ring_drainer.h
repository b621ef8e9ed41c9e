// RingDrainer: moves what the kernel wrote into the ring buffers to the
// recording's sink (record/output/record_sink.h), on the recording thread.
//
// DrainAll copies every CPU's new records into the pending chunk and
// accounts for them on the way (samples and losses per CPU; mappings and
// kernel addresses for the postmortem facts); Flush hands the chunk to the
// sink, without waiting while recording. Owns the pending chunk and the
// counts; uses the opener's rings and the sink, which outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/perf/event_table.h"
#include "record/drain/pending_chunk.h"
#include "record/events/event_opener.h"
#include "record/facts/postmortem_facts.h"
#include "record/output/record_sink.h"
#include "record/output/cpu_counters.h"

namespace sample::record {

// Asks the scheduler to run the calling (draining) thread as soon as a
// ring-buffer wakeup arrives, and where allowed to give it a larger share
// (nice -10); see the definition for why and how. Returns the nice it
// took, when it took one.
std::optional<int> RequestShortSlice();

class RingDrainer {
 public:
  // `cpus`: the CPU of each ring, in the opener's ring_owners() order.
  RingDrainer(EventOpener& opener, std::vector<int> cpus, RecordSink& sink,
              PostmortemFacts& facts);

  // Copies and accounts for everything between tail and head of every ring.
  void DrainAll();
  // An exec waker's ring (EventOpener::exec_wakers): the process of each
  // exec's COMM has its mount namespace noted at once, while it lives
  // (its records reach the file through the sampling rings); then let go.
  void NoteExecs(RingBuffer& waker);
  // Hands the pending chunk to the sink. With `wait` false this never
  // blocks: if the sink cannot take it now (its writer thread holds its
  // lock), returns false and the chunk grows until the next try.
  bool Flush(bool wait);
  // Whether the pending chunk is big enough to hand over.
  bool chunk_full() const;
  bool chunk_empty() const { return chunk_.empty(); }

  // Records written to the file by others (the /proc snapshot), for the
  // trailer's total.
  void CountWritten(uint64_t records) { records_written_ += records; }

  const std::vector<CpuCounters>& counters() const { return counters_; }
  uint64_t records_written() const { return records_written_; }
  // The earliest and latest record times handed over; nullopt: none.
  std::optional<std::pair<uint64_t, uint64_t>> time_range() const;

 private:
  void Account(size_t ring, std::span<const std::byte> bytes);

  EventOpener& opener_;
  std::vector<int> cpus_;
  RecordSink& sink_;
  PostmortemFacts& facts_;
  EventTable table_;        // to parse records by the event that wrote them
  perf_event_attr attr_{};  // the first event's: time and trailer layout are common to all
  std::vector<CpuCounters> counters_;  // per ring
  PendingChunk chunk_;
  bool copies_stacks_ = false;  // some event copies user stacks: compact them
  // kernel.perf_event_max_stack (read once, after --raise-max-stack): an
  // fp,leaf chain that long was cut and keeps its whole stack copy.
  uint32_t host_max_stack_ = 127;
  uint64_t records_written_ = 0;
  uint64_t first_time_ = UINT64_MAX;
  uint64_t last_time_ = 0;
  std::vector<std::byte> exec_records_;  // NoteExecs' copy of a waker's ring
};

}  // namespace sample::record
