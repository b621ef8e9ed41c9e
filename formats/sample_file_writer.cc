#include "formats/sample_file_writer.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "formats/chunk_codec.h"
#include "formats/sample_columns.h"
#include "libsample/crc32.h"

namespace sample::format {

Result<std::unique_ptr<SampleFileWriter>> SampleFileWriter::Create(const std::string& path,
                                                                   const WriterOptions& options) {
  // O_EXCL | O_NOFOLLOW: never write through a symlink someone planted at
  // the output path.
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Fail(fmt::format("{}: cannot create: {}", path, strerror(errno)));
  std::unique_ptr<SampleFileWriter> writer(new SampleFileWriter(std::move(fd), options));

  FileHeader header{};
  std::memcpy(header.magic, kFileMagic, sizeof(header.magic));
  header.version = kFileVersion;
  header.header_size = sizeof(FileHeader);
  header.chunk_header_size = sizeof(ChunkHeader);
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  header.created_realtime_ns = uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
  header.max_chunk_raw_size = options.max_chunk_raw_size;
  auto written = writer->WriteAll(std::as_bytes(std::span(&header, 1)), {});
  if (!written) return Fail(fmt::format("{}: {}", path, written.error().message));
  writer->thread_ = std::thread([w = writer.get()] { w->Run(); });
  return writer;
}

SampleFileWriter::SampleFileWriter(UniqueFd fd, const WriterOptions& options)
    : fd_(std::move(fd)), options_(options) {
  if (options_.zstd_level > 0) {
    auto* ctx = ZSTD_createCCtx();
    zstd_ctx_ =
        std::shared_ptr<void>(ctx, [](void* c) { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(c)); });
    SetZstdLevel(options_.zstd_level);
  }
}

void SampleFileWriter::SetZstdLevel(int level) {
  if (level == zstd_ctx_level_) return;
  auto* ctx = static_cast<ZSTD_CCtx*>(zstd_ctx_.get());
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, level);
  // Level 1 with the double-fast match finder (level 3's) instead of
  // fast: on perf records (fixed layouts, repeated call chains) that is
  // 12-18% smaller at level 1's speed (zstd -b1 --zstd=strategy=2 on
  // recordings of split and threads: ~1 GB/s and 1.6 GB/s either way).
  // Any other level: its own (0).
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_strategy, level == 1 ? ZSTD_dfast : 0);
  zstd_ctx_level_ = level;
}

SampleFileWriter::~SampleFileWriter() {
  pending_.release();  // the release that finds the queue empty
  if (thread_.joinable()) thread_.join();
}

void SampleFileWriter::Submit(ChunkType type, std::vector<std::byte> payload,
                              uint64_t record_count) {
  Pending chunk;
  chunk.header.magic = kChunkMagic;
  chunk.header.type = static_cast<uint16_t>(type);
  chunk.header.record_count = record_count;
  chunk.payload = std::move(payload);
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(chunk));
    ++submitted_;
  }
  pending_.release();
}

SampleFileWriter::Pending SampleFileWriter::MakePending(RecordsChunk& records) {
  Pending chunk;
  chunk.header.magic = kChunkMagic;
  chunk.header.type = static_cast<uint16_t>(ChunkType::kRecords);
  chunk.header.record_count = records.record_count;
  chunk.header.time_min = records.time_min;
  chunk.header.time_max = records.time_max;
  chunk.payload = std::move(records.records);
  chunk.records = std::move(records);
  return chunk;
}

void SampleFileWriter::SubmitRecords(RecordsChunk records) {
  Pending chunk = MakePending(records);
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(chunk));
    ++submitted_;
  }
  pending_.release();
}

bool SampleFileWriter::TrySubmitRecords(RecordsChunk& records, std::vector<std::byte>* spare) {
  {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    queue_.push_back(MakePending(records));
    ++submitted_;
    if (spare != nullptr && !spare_.empty()) {
      *spare = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  pending_.release();
  return true;
}

std::vector<std::byte> SampleFileWriter::TakeSpareBuffer() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || spare_.empty()) return {};
  std::vector<std::byte> buffer = std::move(spare_.back());
  spare_.pop_back();
  return buffer;
}

// This thread runs at its creator's priority. A recorder once lowered it
// (nice +10) so that compressing would not delay its draining thread, but
// that thread asks for a short slice and preempts this one anyway, and
// the lowered writer fell hundreds of MB behind at high sample rates
// (--call-graph dwarf -F 50000: 160 MB peak). The draining thread then
// allocated a fresh buffer for every chunk, and both threads' page faults,
// mmap and munmap met on the process's mmap lock, where the drain waited
// for a writer the workload kept off the CPU: stalls of 10+ ms, 5 times the
// lost samples and 1.3 times the recorder CPU of this thread at nice 0.
void SampleFileWriter::Run() {
  for (;;) {
    Pending chunk;
    {
      pending_.acquire();
      std::lock_guard lock(mutex_);
      if (queue_.empty()) return;  // Finish or the destructor
      chunk = std::move(queue_.front());
      queue_.pop_front();
    }
    if (const int nice = thread_nice_.load(std::memory_order_relaxed); nice != applied_nice_) {
      (void)setpriority(PRIO_PROCESS, 0, nice);  // Linux: this thread only
      applied_nice_ = nice;
    }
    if (status_) {  // after a write error, drop the rest
      auto result = WriteChunk(chunk);
      if (!result) {
        status_ = result;
        failed_.store(true, std::memory_order_release);
      }
    }
    // Every records buffer is kept for the recorder (TakeSpareBuffer says
    // why none is freed); there are only as many as it had to allocate
    // while this thread was behind.
    if (chunk.header.type == static_cast<uint16_t>(ChunkType::kRecords) &&
        chunk.payload.capacity() > 0) {
      chunk.payload.clear();
      std::lock_guard lock(mutex_);
      spare_.push_back(std::move(chunk.payload));
    }
    done_.fetch_add(1, std::memory_order_release);
    done_.notify_all();
  }
}

void SampleFileWriter::WaitUntilWritten() {
  uint64_t target;
  {
    std::lock_guard lock(mutex_);
    target = submitted_;
  }
  for (uint64_t done = done_.load(std::memory_order_acquire); done < target;
       done = done_.load(std::memory_order_acquire)) {
    done_.wait(done, std::memory_order_acquire);
  }
}

void AppendWithCpus(std::span<const std::byte> records, const std::vector<CpuRun>& runs,
                    const CpuFieldPlace& place, std::vector<std::byte>& out) {
  // Every record grows by 8 bytes, and none is under 32.
  out.reserve(out.size() + records.size() + records.size() / 4 + 4096);
  size_t start = 0;
  for (const CpuRun& run : runs) {
    const size_t end = std::min(run.end, records.size());
    if (end <= start) continue;
    InsertCpuField(records.subspan(start, end - start), run.cpu, place, out);
    start = end;
  }
  if (start < records.size()) {  // not in any run: kept as it came
    const size_t old = out.size();
    out.resize(old + records.size() - start);
    std::memcpy(out.data() + old, records.data() + start, records.size() - start);
  }
}

void SampleFileWriter::InsertCpus(Pending& chunk) {
  expanded_.clear();
  AppendWithCpus(chunk.payload, chunk.records.cpu_runs, *chunk.records.cpu_field, expanded_);
  // The drained buffer (recycled as a spare by the caller) and this one
  // swap roles, so neither is allocated again.
  std::swap(chunk.payload, expanded_);
}

void SampleFileWriter::NoteEvents(std::span<const std::byte> payload) {
  // Our own encoding of the recorder's events: it decodes, or the file's
  // readers will say so; the records are then written as they are.
  auto events = DecodeEvents(payload, 0);
  if (!events) return;
  std::vector<EventDesc> all = events_.events();
  all.insert(all.end(), events->begin(), events->end());
  events_ = EventTable(std::move(all));
}

Result<void> SampleFileWriter::WriteChunk(Pending& chunk) {
  const bool records = chunk.header.type == static_cast<uint16_t>(ChunkType::kRecords);
  if (records && chunk.records.cpu_field) InsertCpus(chunk);
  if (chunk.header.type == static_cast<uint16_t>(ChunkType::kEvents)) NoteEvents(chunk.payload);
  // Before the time deltas and the splitting change or cut the records.
  if (records && options_.observe_records) options_.observe_records(chunk.payload);
  if (records) raw_bytes_.fetch_add(chunk.payload.size(), std::memory_order_relaxed);
  const uint64_t limit = options_.max_chunk_raw_size;
  if (chunk.payload.size() <= limit) {
    return WritePayload(chunk.header, chunk.payload, chunk.records.sample_time_offset);
  }
  if (!records) {
    return Fail(fmt::format("a chunk of type {} holds {} bytes, over the {} readers take",
                            chunk.header.type, chunk.payload.size(), limit));
  }
  // A drain can hand over every ring's contents at once (-m of hundreds of
  // MiB): split at record boundaries. Each piece keeps the whole chunk's
  // time range, which still bounds its records (readers order by it).
  const std::span<const std::byte> all = chunk.payload;
  std::vector<std::byte> piece;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = start;
    uint64_t count = 0;
    while (end < all.size()) {
      uint16_t size = 0;
      if (all.size() - end >= sizeof(perf_event_header)) {
        std::memcpy(&size, all.data() + end + offsetof(perf_event_header, size), sizeof(size));
      }
      // A malformed tail goes as it is, with the piece before it.
      if (size < sizeof(perf_event_header) || size > all.size() - end) {
        end = all.size();
        break;
      }
      if (end > start && end - start + size > limit) break;
      end += size;
      ++count;
    }
    piece.assign(all.begin() + start, all.begin() + end);
    ChunkHeader header = chunk.header;
    header.record_count = count;
    TRY(WritePayload(header, piece, chunk.records.sample_time_offset));
    start = end;
  }
  return {};
}

Result<void> SampleFileWriter::WritePayload(ChunkHeader header, std::vector<std::byte>& payload,
                                            uint32_t sample_time_offset) {
  const bool records = header.type == static_cast<uint16_t>(ChunkType::kRecords);
  std::span<const std::byte> stored;
  header.compression = static_cast<uint16_t>(Compression::kNone);
  if (zstd_ctx_ && !payload.empty()) {
    std::optional<SampleColumnParts> parts;
    constexpr ColumnCoding kCoding{.split_time = true, .recent_sp = true};
    constexpr uint32_t kColumnFlags =
        kChunkFlagSampleColumns | kChunkFlagSplitTimeColumn | kChunkFlagRecentStackPointers;
    if (records) parts = EncodeSampleColumns(payload, events_, kCoding);
    if (parts) {
      header.flags |= kColumnFlags;
      // Columns of 10-byte varints can outgrow what readers take (never
      // seen: a sample's time and registers shrink): back to plain records.
      if (payload.size() > options_.max_chunk_raw_size) {
        const auto records_size = DecodeSampleColumns(payload, events_, kCoding);
        if (!records_size) {
          return Fail("our sample columns do not decode: " + records_size.error().message);
        }
        payload.resize(*records_size);
        header.flags &= ~kColumnFlags;
        parts.reset();
      }
    }
    const uint32_t offset = sample_time_offset;
    if (records && (header.flags & kChunkFlagSampleColumns) == 0 && offset != 0 &&
        offset % 8 == 0 && offset <= ChunkTimeOffset(kChunkTimeOffsetMask)) {
      EncodeSampleTimeDeltas(payload, offset);
      header.flags |= kChunkFlagSampleTimeDeltas | (offset << kChunkTimeOffsetShift);
    }
    // The records, the time column's low bytes, its high part and the
    // other columns, each a frame of its own (kChunkFlagSplitTimeColumn);
    // else one frame.
    std::vector<size_t> starts = {0};
    if (parts) starts.insert(starts.end(), {parts->time_low, parts->time_high, parts->rest});
    starts.push_back(payload.size());
    // Grows to the largest chunk's bound; never zero-filled: a chunk
    // compresses to a twentieth of its bound, and each page of the bound
    // the zeros touched cost a page fault (~3 us each on this VM: 0.7 ms
    // of a short recording's CPU, 256 faults of its ~1,000).
    size_t bound = 0;
    for (size_t i = 0; i + 1 < starts.size(); ++i)
      bound += ZSTD_compressBound(starts[i + 1] - starts[i]);
    // A small chunk at its own level: qsort's records at -F 1000 (~83 KB
    // a chunk) take 12% fewer bytes at level 6 than at 1, for ~0.4 ms a
    // chunk (190 MB/s against 1,200); records chunks, at most 2 x 128 KiB
    // a second, other chunks once or a few times a recording.
    const bool small =
        options_.small_chunk_level != 0 && payload.size() <= WriterOptions::kSmallChunkSize;
    SetZstdLevel(small ? options_.small_chunk_level : options_.zstd_level);
    if (compressed_size_ < bound) {
      compressed_.reset();
      compressed_.reset(new std::byte[bound]);  // default-initialized: not touched
      compressed_size_ = bound;
    }
    size_t size = 0;
    for (size_t i = 0; i + 1 < starts.size(); ++i) {
      if (starts[i + 1] == starts[i] && i != 0) continue;  // an empty part needs no frame
      const size_t frame = ZSTD_compress2(static_cast<ZSTD_CCtx*>(zstd_ctx_.get()),
                                          compressed_.get() + size, compressed_size_ - size,
                                          payload.data() + starts[i], starts[i + 1] - starts[i]);
      if (ZSTD_isError(frame)) {
        return Fail(fmt::format("zstd compression failed: {}", ZSTD_getErrorName(frame)));
      }
      size += frame;
    }
    stored = std::span<const std::byte>(compressed_.get(), size);
    header.compression = static_cast<uint16_t>(Compression::kZstd);
  } else {
    stored = payload;
  }
  header.raw_size = payload.size();
  header.stored_size = stored.size();
  header.crc32 = 0;
  uint32_t crc = Crc32(std::as_bytes(std::span(&header, 1)));
  header.crc32 = Crc32(stored, crc);
  chunk_offsets_.push_back(bytes_written());
  return WriteAll(std::as_bytes(std::span(&header, 1)), stored);
}

Result<void> SampleFileWriter::WriteAll(std::span<const std::byte> a,
                                        std::span<const std::byte> b) {
  iovec iov[2] = {{const_cast<std::byte*>(a.data()), a.size()},
                  {const_cast<std::byte*>(b.data()), b.size()}};
  int index = 0;
  while (index < 2) {
    if (iov[index].iov_len == 0) {
      ++index;
      continue;
    }
    const ssize_t n = writev(fd_.get(), iov + index, 2 - index);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(fmt::format("write failed: {}", strerror(errno)));
    }
    bytes_written_.fetch_add(n, std::memory_order_relaxed);
    size_t left = static_cast<size_t>(n);
    while (index < 2 && left >= iov[index].iov_len) {
      left -= iov[index].iov_len;
      iov[index].iov_len = 0;
      ++index;
    }
    if (index < 2) {
      iov[index].iov_base = static_cast<char*>(iov[index].iov_base) + left;
      iov[index].iov_len -= left;
    }
  }
  return {};
}

Result<void> SampleFileWriter::Finish(Trailer trailer) {
  pending_.release();  // the release that finds the queue empty
  if (thread_.joinable()) thread_.join();
  if (!status_) return status_;
  trailer.chunk_offsets = chunk_offsets_;
  trailer.header.bytes_raw = raw_bytes();  // every records chunk is counted by now
  Pending chunk;
  chunk.header.magic = kChunkMagic;
  chunk.header.type = static_cast<uint16_t>(ChunkType::kTrailer);
  chunk.payload = EncodeTrailer(trailer);
  chunk.header.raw_size = chunk.payload.size();
  auto result = WriteChunk(chunk);
  if (!result) return result;
  // No fsync: the page cache already protects the file against the recorder
  // dying, and a sync would add tens of milliseconds to every recording.
  fd_.Reset();
  return {};
}

}  // namespace sample::format
