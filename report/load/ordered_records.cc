#include "report/load/ordered_records.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"

namespace sample::report {

OrderedRecordStream::OrderedRecordStream(const format::RecordingFile& reader, unsigned jobs,
                                         std::vector<format::Payload>* pool)
    : reader_(reader), chunks_(reader.record_chunks()), pool_(pool) {
  if (pool_ != nullptr) spare_.swap(*pool_);
  const size_t n = chunks_.size();
  later_min_.assign(n + 1, std::numeric_limits<uint64_t>::max());
  for (size_t i = n; i-- > 0;) {
    const uint64_t t = chunks_[i].header.time_min;
    // A chunk without times (0) bounds nothing: its records have no time.
    later_min_[i] = t != 0 ? std::min(t, later_min_[i + 1]) : later_min_[i + 1];
  }
  slots_.resize(n);
  payloads_.resize(n);
  remaining_.assign(n, 0);
  if (jobs > 1 && n > 1) {
    window_ = jobs;
    const unsigned threads = std::min<size_t>(jobs, n);
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }
}

OrderedRecordStream::~OrderedRecordStream() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  space_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  if (pool_ != nullptr) pool_->swap(spare_);
}

void OrderedRecordStream::Decode(uint32_t index, Decoded& out) const {
  const format::ChunkRef& chunk = chunks_[index];
  if (auto read = reader_.ReadPayloadInto(chunk, out.payload); !read) {
    out.failed = true;
    out.warning = read.error().message + "; chunk skipped";
    return;
  }
  const EventTable& events = reader_.events();
  const auto bytes = out.payload.bytes();
  // The header's count is untrusted: no more records than the payload can
  // hold (each has at least a header).
  out.refs.reserve(
      std::min<uint64_t>(chunk.header.record_count, bytes.size() / sizeof(perf_event_header)));
  const size_t walked = ForEachRecord(bytes, [&](const perf_event_header&,
                                                 std::span<const std::byte> record) {
    auto event = events.EventIndexFor(record);
    if (!event) {
      ++out.unknown_event_records;
      return;
    }
    out.refs.push_back(Ref{
        RecordTime(record, events.events()[*event].attr), index, static_cast<uint32_t>(*event),
        static_cast<uint32_t>(record.data() - bytes.data()), static_cast<uint32_t>(record.size())});
  });
  if (walked != bytes.size()) {
    out.warning = fmt::format(
        "{}: offset {}: malformed record at byte {} of the chunk; the rest of the chunk is "
        "skipped",
        reader_.path(), chunk.offset, walked);
  }
  // Each CPU's records are already in order, so this is mostly merging.
  std::stable_sort(out.refs.begin(), out.refs.end(),
                   [](const Ref& a, const Ref& b) { return a.time < b.time; });
}

format::Payload OrderedRecordStream::TakeSpare() {
  std::lock_guard lock(mutex_);
  if (spare_.empty()) return {};
  format::Payload payload = std::move(spare_.back());
  spare_.pop_back();
  return payload;
}

void OrderedRecordStream::Recycle(format::Payload payload) {
  std::lock_guard lock(mutex_);
  if (spare_.size() < 2) spare_.push_back(std::move(payload));
}

void OrderedRecordStream::WorkerLoop() {
  for (;;) {
    uint32_t index;
    {
      std::unique_lock lock(mutex_);
      // Ahead of the consumer by at most window_ chunks and, however many
      // threads -j gives, at most kDecodeBudget bytes decompressed at once
      // (one chunk always may go): each chunk may claim up to the file's
      // chunk limit, and a crafted file claims it for every one.
      space_cv_.wait(lock, [this] {
        if (stopping_ || next_to_decode_ >= slots_.size()) return true;
        const uint64_t claim = Claim(next_to_decode_);
        return next_to_decode_ < next_to_consume_ + window_ &&
               (in_flight_bytes_ == 0 || in_flight_bytes_ + claim <= kDecodeBudget);
      });
      if (stopping_ || next_to_decode_ >= slots_.size()) return;
      index = next_to_decode_++;
      in_flight_bytes_ += Claim(index);
    }
    Decoded decoded;
    decoded.payload = TakeSpare();
    Decode(index, decoded);
    {
      std::lock_guard lock(mutex_);
      decoded.ready = true;
      slots_[index] = std::move(decoded);
    }
    decoded_cv_.notify_all();
  }
}

OrderedRecordStream::Decoded& OrderedRecordStream::Take(uint32_t index) {
  if (workers_.empty()) {
    slots_[index].payload = TakeSpare();
    Decode(index, slots_[index]);
    slots_[index].ready = true;
    return slots_[index];
  }
  std::unique_lock lock(mutex_);
  decoded_cv_.wait(lock, [&] { return slots_[index].ready; });
  return slots_[index];
}

std::span<const TimedRecord> OrderedRecordStream::NextBatch() {
  // The previous batch is consumed: free the payloads it finished.
  for (uint32_t chunk : batch_chunks_) {
    if (remaining_[chunk] == 0) Recycle(std::move(payloads_[chunk]));
  }
  batch_chunks_.clear();
  batch_.clear();

  for (;;) {
    const uint64_t safe = later_min_[next_to_consume_];
    // Emit what no later chunk can precede.
    const auto begin = pending_.begin() + static_cast<ptrdiff_t>(pending_begin_);
    const auto end = std::lower_bound(begin, pending_.end(), safe,
                                      [](const Ref& r, uint64_t t) { return r.time < t; });
    if (end != begin || next_to_consume_ == chunks_.size()) {
      for (auto it = begin; it != end; ++it) {
        batch_.push_back(TimedRecord{it->time, it->event,
                                     payloads_[it->chunk].bytes().subspan(it->offset, it->size)});
        if (--remaining_[it->chunk] == 0) batch_chunks_.push_back(it->chunk);
      }
      pending_begin_ = static_cast<size_t>(end - pending_.begin());
      return batch_;
    }
    // Nothing can go out yet: read the next chunk into the pending records.
    const uint32_t index = next_to_consume_;
    Decoded& decoded = Take(index);
    {
      std::lock_guard lock(mutex_);
      ++next_to_consume_;
      if (!workers_.empty()) in_flight_bytes_ -= Claim(index);
    }
    space_cv_.notify_all();
    stats_.unknown_event_records += decoded.unknown_event_records;
    if (decoded.failed) ++stats_.bad_chunks;
    if (!decoded.failed && !decoded.warning.empty()) ++stats_.malformed_chunks;
    if (!decoded.warning.empty()) stats_.warnings.push_back(std::move(decoded.warning));
    if (!decoded.refs.empty()) {
      payloads_[index] = std::move(decoded.payload);
      remaining_[index] = static_cast<uint32_t>(decoded.refs.size());
      // Drop the emitted prefix, then merge: earlier chunks' records stay
      // first among equal times, as in a stable sort of the whole file.
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(pending_begin_));
      pending_begin_ = 0;
      const size_t old_size = pending_.size();
      pending_.insert(pending_.end(), decoded.refs.begin(), decoded.refs.end());
      std::inplace_merge(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(old_size),
                         pending_.end(),
                         [](const Ref& a, const Ref& b) { return a.time < b.time; });
    }
    if (decoded.refs.empty()) Recycle(std::move(decoded.payload));
    std::lock_guard lock(mutex_);
    slots_[index] = Decoded();
  }
}

}  // namespace sample::report
