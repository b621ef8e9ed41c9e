// SampleFileWriter: creates a sample.data file and appends chunks to it.
//
// Chunks are handed over with Submit() and compressed and written by a
// background thread, so the recorder's ring-buffer draining never waits for
// zstd or the disk. Each chunk goes to the file with one write, so a
// recorder killed at any moment leaves every earlier chunk intact. Owns the
// output fd, the zstd context and the thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/sample_file_format.h"
#include "libsample/perf/perf_record.h"
#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample::format {

struct WriterOptions {
  // zstd level; 0 stores chunks uncompressed.
  int zstd_level = 1;
  // The level of any chunk of at most kSmallChunkSize bytes, records or
  // not (0: zstd_level; ignored when zstd_level is 0). Records chunks go
  // out every half second (record/recording_loop.cc), so at low sample
  // rates they are small: each compressed alone, they compress worse, and
  // effort costs little; other chunks are written once (events, build-ids,
  // embedded binaries) or a few (jitdump parts).
  int small_chunk_level = 0;
  static constexpr size_t kSmallChunkSize = size_t{128} << 10;
  // The largest chunk payload written, declared in the file header (readers
  // refuse chunks that claim more): record chunks above it are split at
  // record boundaries; any other chunk above it is an error.
  uint64_t max_chunk_raw_size = kWriterMaxChunkRawSize;
  // Called on the writer thread with the records of every kRecords chunk
  // (SubmitRecords, TrySubmitRecords and Submit alike), in submission
  // order, before the chunk is written: the records the file holds, CPUs
  // inserted (exactly what the kernel writes for the kEvents attrs),
  // before sample times become deltas, and before a chunk over the limit
  // is split. Not called for chunks dropped after a write error. A
  // recorder looks at its samples here, off its draining thread; whatever
  // the observer keeps, it shares with other threads on its own terms, or
  // through WaitUntilWritten. It must not call the writer. It may change
  // the records in place, keeping each record's layout and size (the
  // recorder clears what stack copies hold besides addresses:
  // CodeHits::Observe).
  std::function<void(std::span<std::byte> records)> observe_records = nullptr;
};

// Records drained from one CPU's ring buffer: those before byte `end` of
// the chunk (and after the previous run's end).
struct CpuRun {
  size_t end = 0;
  uint32_t cpu = 0;
};

// A kRecords chunk as a recorder hands it over: records as the kernel wrote
// them into the ring buffers. What the writer changes is done on its own
// thread, off the draining path.
struct RecordsChunk {
  std::vector<std::byte> records;
  uint64_t record_count = 0;
  uint64_t time_min = 0;
  uint64_t time_max = 0;
  // Where the time field sits in the records' PERF_RECORD_SAMPLEs (the same
  // for all of the recording's events); when nonzero and the chunk is
  // compressed, sample times are stored as deltas (kChunkFlagSampleTimeDeltas).
  uint32_t sample_time_offset = 0;
  // Set when the recording's events leave PERF_SAMPLE_CPU out, so that
  // ring buffers hold more samples: the writer inserts each run's CPU
  // where the field goes, and the file holds the records the kernel would
  // have written with it (the kEvents chunk's attrs include it).
  std::optional<CpuFieldPlace> cpu_field;
  std::vector<CpuRun> cpu_runs;
};

// Appends `records` (a RecordsChunk's, drained without PERF_SAMPLE_CPU) to
// `out` with each run's CPU inserted where `place` says: the records a
// file holds. Bytes after the last run are appended as they are.
void AppendWithCpus(std::span<const std::byte> records, const std::vector<CpuRun>& runs,
                    const CpuFieldPlace& place, std::vector<std::byte>& out);

class SampleFileWriter {
 public:
  // Creates `path` with mode 0600; fails if it exists or is a symlink (the
  // caller moves an old file aside first).
  static Result<std::unique_ptr<SampleFileWriter>> Create(const std::string& path,
                                                          const WriterOptions& options);
  ~SampleFileWriter();
  SampleFileWriter(const SampleFileWriter&) = delete;
  SampleFileWriter& operator=(const SampleFileWriter&) = delete;

  // Queues a chunk for writing. Chunks are written in submission order.
  void Submit(ChunkType type, std::vector<std::byte> payload, uint64_t record_count = 0);
  // Queues a kRecords chunk, in the same order.
  void SubmitRecords(RecordsChunk chunk);
  // The same without waiting: when the writer thread holds the queue's
  // lock, returns false and leaves `chunk` as it was. A thread that must
  // not stall (a recorder's draining thread) uses this and tries again
  // later: the writer can be preempted by busy workload threads while
  // holding the lock, for milliseconds when the CPUs are busy, longer than
  // a small ring buffer lasts. When it succeeds and `spare` is given, a
  // spare buffer (see TakeSpareBuffer) is moved there under the same lock,
  // if there is one.
  bool TrySubmitRecords(RecordsChunk& chunk, std::vector<std::byte>* spare = nullptr);

  // The writer thread takes nice value `nice` before its next chunk: a
  // recorder whose draining thread runs at a raised priority keeps the
  // writer beside it (Run in the .cc says why a writer left behind costs
  // lost samples). Never fails; the kernel may refuse, which changes
  // nothing.
  void SetThreadNice(int nice) const { thread_nice_.store(nice, std::memory_order_relaxed); }

  // A records buffer the writer is done with (cleared, capacity kept), or
  // an empty vector when none is spare or the lock is held (this never
  // waits either). Recorders build their next chunk in it: a fresh 4 MiB
  // buffer costs a page fault and a kernel page clear per 4 KiB, which was
  // over half of sample-record's CPU at -F 50000. The writer keeps every
  // records buffer it is handed until it is destroyed, so that it never
  // frees one while recording: freeing a large block unmaps it (or trims
  // the heap), which holds the process's mmap lock, and a draining thread
  // that page-faults meanwhile waits for the writer to be
  // run again (up to 13 ms seen at -F 50000 --call-graph dwarf: lost
  // samples).
  std::vector<std::byte> TakeSpareBuffer();

  // Blocks until every chunk submitted (by any thread) before the call has
  // been written, or dropped after a write error: its records observed,
  // its bytes in the file. What observe_records did for those chunks
  // happens before this returns, so the caller may read what the observer
  // kept of them (the observer goes on with later chunks meanwhile). Any
  // thread but the writer's (so not from observe_records); not after
  // Finish.
  void WaitUntilWritten();

  // Writes every queued chunk, then the trailer (its chunk offsets and
  // bytes_raw filled in here), and closes the file. Returns the first error
  // met while writing.
  Result<void> Finish(Trailer trailer);

  // Whether a write has failed (a full disk, a quota); the chunks queued
  // after it are dropped and Finish returns the error. Any thread may ask:
  // a recorder stops recording rather than drain into nothing.
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  // Bytes in the file so far and kernel-record bytes before compression;
  // safe to read from any thread.
  uint64_t bytes_written() const { return bytes_written_.load(std::memory_order_relaxed); }
  uint64_t raw_bytes() const { return raw_bytes_.load(std::memory_order_relaxed); }

 private:
  struct Pending {
    ChunkHeader header{};
    RecordsChunk records;  // kRecords: how to write them (the bytes are moved to payload)
    std::vector<std::byte> payload;
  };

  SampleFileWriter(UniqueFd fd, const WriterOptions& options);
  static Pending MakePending(RecordsChunk& records);
  void Run();
  void InsertCpus(Pending& chunk);
  // A kEvents chunk on its way: the file's events, whose sample layouts
  // the register deltas (user_reg_deltas.h) read.
  void NoteEvents(std::span<const std::byte> payload);
  Result<void> WriteChunk(Pending& chunk);
  // Sets zstd_ctx_ to `level` (level 1 with the double-fast match finder).
  void SetZstdLevel(int level);
  // One chunk of `header`'s type from `payload` (changed in place: time
  // and register deltas), compressed when the writer compresses.
  Result<void> WritePayload(ChunkHeader header, std::vector<std::byte>& payload,
                            uint32_t sample_time_offset);
  Result<void> WriteAll(std::span<const std::byte> a, std::span<const std::byte> b);

  UniqueFd fd_;
  WriterOptions options_;
  std::shared_ptr<void> zstd_ctx_;  // ZSTD_CCtx, owned, used only by the writer thread

  std::mutex mutex_;
  // One release per queued chunk and one to close. Releasing never waits
  // for a lock (a condition variable's notify can, on glibc's internal
  // one), so submitting never waits on the writer thread.
  std::counting_semaphore<> pending_{0};
  std::deque<Pending> queue_;
  uint64_t submitted_ = 0;                     // chunks queued so far
  std::vector<std::vector<std::byte>> spare_;  // written records buffers, for reuse
  Result<void> status_;                        // first error; written by the writer thread
  std::atomic<bool> failed_{false};            // !status_, for other threads
  static constexpr int kKeepNice = INT32_MIN;
  mutable std::atomic<int> thread_nice_{kKeepNice};  // SetThreadNice's, for the thread
  int applied_nice_ = kKeepNice;                     // the thread's own
  // Chunks the writer thread is done with (written or dropped); released
  // after each, so WaitUntilWritten's acquire sees what was done for them.
  std::atomic<uint64_t> done_{0};

  int zstd_ctx_level_ = 0;  // the level zstd_ctx_ is set to
  // Writer thread only; reused across chunks.
  std::unique_ptr<std::byte[]> compressed_;
  size_t compressed_size_ = 0;
  std::vector<std::byte> expanded_;    // writer thread only: records with CPUs inserted
  std::vector<uint64_t> chunk_offsets_;
  EventTable events_;  // writer thread only: the kEvents chunks' events so far
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> raw_bytes_{0};
  std::thread thread_;
};

}  // namespace sample::format
