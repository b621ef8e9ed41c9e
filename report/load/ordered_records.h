// OrderedRecordStream: every kernel record of a recording (sample.data or
// perf.data, through format::RecordingFile's record chunks), in time order,
// with memory bounded by a few chunks instead of the whole file.
//
// The recorder appends a chunk per drain of all ring buffers, so chunks are
// nearly in time order: a record can only be older than records of the
// previous chunk by the time one drain takes. The stream decompresses and
// indexes chunks on `jobs` worker threads (a bounded distance ahead of the
// consumer), keeps the not-yet-emitted records sorted, and emits every
// record older than the oldest record any later chunk can hold (from the
// chunk headers' time_min). The order is exactly that of a stable sort of
// all records by time in file order, as perf's ordered events would give;
// records without a time (0) go out when their chunk is read.
// Owns the worker threads and the decompressed payloads.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "formats/recording_file.h"

namespace sample::report {

struct TimedRecord {
  uint64_t time = 0;
  uint32_t event = 0;  // index into the file's event table
  std::span<const std::byte> bytes;
};

struct RecordStreamStats {
  uint64_t bad_chunks = 0;             // checksum or decompression failures
  uint64_t malformed_chunks = 0;       // a record with an impossible size
  uint64_t unknown_event_records = 0;  // id not in the event table
  std::vector<std::string> warnings;
};

class OrderedRecordStream {
 public:
  // `jobs` threads decode chunks; 0 or 1 decodes on the calling thread.
  // `pool`, when given, lends payload buffers and gets the stream's spare
  // ones back when it ends (a live view makes a stream every refresh).
  OrderedRecordStream(const format::RecordingFile& reader, unsigned jobs,
                      std::vector<format::Payload>* pool = nullptr);
  ~OrderedRecordStream();
  OrderedRecordStream(const OrderedRecordStream&) = delete;
  OrderedRecordStream& operator=(const OrderedRecordStream&) = delete;

  // The next records in time order; empty once every record was returned.
  // The span and the records' bytes stay valid until the next call.
  std::span<const TimedRecord> NextBatch();

  // Complete once NextBatch() has returned an empty span.
  const RecordStreamStats& stats() const { return stats_; }

 private:
  struct Ref {
    uint64_t time;
    uint32_t chunk;
    uint32_t event;
    uint32_t offset;
    uint32_t size;
  };
  struct Decoded {
    bool ready = false;
    bool failed = false;
    format::Payload payload;
    std::vector<Ref> refs;  // sorted by time, stable
    uint64_t unknown_event_records = 0;
    std::string warning;
  };

  void Decode(uint32_t index, Decoded& out) const;
  void WorkerLoop();
  // Payload buffers are reused: each fresh one would cost page faults and
  // stay in a worker thread's malloc arena after being freed.
  format::Payload TakeSpare();
  void Recycle(format::Payload payload);
  // Waits for chunk `index` (decoding it here when there are no workers).
  Decoded& Take(uint32_t index);

  const format::RecordingFile& reader_;
  const std::vector<format::ChunkRef>& chunks_;
  // later_min_[i]: the smallest time_min of chunks i.. (UINT64_MAX if none).
  std::vector<uint64_t> later_min_;

  std::mutex mutex_;
  std::condition_variable decoded_cv_;
  std::condition_variable space_cv_;
  std::vector<Decoded> slots_;  // slot i holds chunk i until consumed
  uint32_t next_to_decode_ = 0;
  uint32_t next_to_consume_ = 0;
  uint32_t window_ = 0;  // how far ahead of the consumer workers may decode
  // Payload bytes claimed by chunks being decoded or decoded and not yet
  // taken by the consumer; workers wait while a chunk would pass the budget.
  static constexpr uint64_t kDecodeBudget = uint64_t{64} << 20;
  uint64_t in_flight_bytes_ = 0;
  // What chunk `index` counts against the budget: its header's raw size,
  // capped so that a crafted size (the reader refuses it anyway) cannot
  // wrap the sum.
  uint64_t Claim(uint32_t index) const {
    return std::min<uint64_t>(chunks_[index].header.raw_size, kDecodeBudget);
  }
  bool stopping_ = false;
  std::vector<std::thread> workers_;

  std::vector<format::Payload> spare_;     // guarded by mutex_
  std::vector<format::Payload>* pool_;     // the caller's, or null
  std::vector<format::Payload> payloads_;  // by chunk index; recycled when done
  std::vector<uint32_t> remaining_;        // records of each chunk not yet emitted
  std::vector<Ref> pending_;               // sorted; [pending_begin_, end) not emitted
  size_t pending_begin_ = 0;
  std::vector<TimedRecord> batch_;
  std::vector<uint32_t> batch_chunks_;  // chunks whose payload may be freed after the batch
  RecordStreamStats stats_;
};

}  // namespace sample::report
