#include "report/load/allocations.h"

#include <algorithm>

namespace sample::report {

void Allocations::Enter(uint32_t tid, uint32_t function, uint64_t size,
                        std::optional<uint64_t> old_ptr, size_t handle,
                        std::optional<uint64_t> sp) {
  ++sequence_;
  Thread& thread = threads_[tid];
  thread.last_free = 0;
  while (sp && !thread.calls.empty() && thread.calls.back().sp) {
    const Call& top = thread.calls.back();
    if (*top.sp > *sp || (*top.sp == *sp && top.function != function)) break;
    ++stats_.unpaired;  // returned, its return unseen
    dropped_.push_back(top.handle);
    thread.calls.pop_back();
  }
  const bool nested = !thread.calls.empty();
  thread.calls.push_back({function, size, old_ptr, handle, nested, sp});
}

std::optional<AllocBlock> Allocations::Return(uint32_t tid, uint32_t function, uint64_t time,
                                              uint64_t ptr) {
  ++sequence_;
  auto it = threads_.find(tid);
  if (it == threads_.end()) return std::nullopt;
  Thread& thread = it->second;
  thread.last_free = 0;
  // The innermost call of this function; those above it lost their returns.
  auto call = std::find_if(thread.calls.rbegin(), thread.calls.rend(),
                           [&](const Call& c) { return c.function == function; });
  if (call == thread.calls.rend()) return std::nullopt;  // its call was not recorded
  const size_t at = static_cast<size_t>(thread.calls.rend() - call) - 1;
  for (size_t i = at + 1; i < thread.calls.size(); ++i) {
    ++stats_.unpaired;
    dropped_.push_back(thread.calls[i].handle);
  }
  const Call done = thread.calls[at];
  thread.calls.resize(at);
  if (done.nested) {
    ++stats_.nested;
    dropped_.push_back(done.handle);
    return std::nullopt;
  }
  const uint64_t before = stats_.live_bytes;
  if (done.old_ptr && (ptr != 0 || done.size == 0)) {
    // realloc: the old block ends when a new one is returned, and when
    // size 0 frees it (returning NULL).
    if (*done.old_ptr != 0) {
      if (Release(*done.old_ptr)) {
        ++stats_.frees;
      } else {
        ++stats_.unknown_frees;
      }
    }
  }
  if (ptr == 0) {
    ++stats_.failed;
    dropped_.push_back(done.handle);
    Note(time, before);
    return std::nullopt;
  }
  Add(ptr, done, time);
  Note(time, before);
  return AllocBlock{done.handle, done.size};
}

void Allocations::Free(uint32_t tid, uint64_t time, uint64_t ptr) {
  ++sequence_;
  if (ptr == 0) return;  // free(NULL) frees nothing
  Thread& thread = threads_[tid];
  for (const Call& call : thread.calls) {
    if (call.old_ptr == ptr) {
      ++stats_.nested;  // realloc's own free: the realloc's return says it
      return;
    }
  }
  const uint64_t before = stats_.live_bytes;
  if (Release(ptr)) {
    ++stats_.frees;
    Note(time, before);
  } else if (thread.last_free != ptr) {
    ++stats_.unknown_frees;
  }
  thread.last_free = ptr;
}

void Allocations::Exited(uint32_t tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) return;
  for (const Call& call : it->second.calls) {
    ++stats_.unpaired;
    dropped_.push_back(call.handle);
  }
  threads_.erase(it);
}

std::vector<size_t> Allocations::TakeDropped() {
  for (auto& [tid, thread] : threads_) {
    for (const Call& call : thread.calls) {
      ++stats_.unpaired;
      dropped_.push_back(call.handle);
    }
    thread.calls.clear();
  }
  return std::move(dropped_);
}

std::vector<AllocBlock> Allocations::LiveBlocks() const {
  std::vector<AllocBlock> out;
  for (const Block& block : blocks_) {
    if (block.freed == kLive) out.push_back({block.handle, block.size});
  }
  return out;
}

std::vector<AllocBlock> Allocations::PeakBlocks() const {
  std::vector<AllocBlock> out;
  for (size_t i = 0; i < peak_end_; ++i) {
    if (blocks_[i].freed > peak_sequence_) out.push_back({blocks_[i].handle, blocks_[i].size});
  }
  return out;
}

bool Allocations::Release(uint64_t ptr) {
  auto it = live_.find(ptr);
  if (it == live_.end()) return false;
  Block& block = blocks_[it->second];
  block.freed = sequence_;
  stats_.live_bytes -= block.size;
  --stats_.live_blocks;
  live_.erase(it);
  return true;
}

void Allocations::Add(uint64_t ptr, const Call& call, uint64_t time) {
  // A block at the same address that was never freed: its free was lost
  // (or happened where no probe saw it); it ends here.
  Release(ptr);
  ++stats_.allocations;
  stats_.allocated_bytes += call.size;
  live_[ptr] = blocks_.size();
  blocks_.push_back({call.handle, call.size});
  stats_.live_bytes += call.size;
  ++stats_.live_blocks;
  if (stats_.live_bytes > stats_.peak_bytes) {
    stats_.peak_bytes = stats_.live_bytes;
    stats_.peak_time = time;
    peak_sequence_ = sequence_;
    peak_end_ = blocks_.size();
  }
  if (blocks_.size() >= compact_at_) Compact();
}

void Allocations::Note(uint64_t time, uint64_t before) {
  LiveTimeline& t = timeline_;
  if (t.most.empty()) t.start = time;
  if (time < t.start) time = t.start;
  size_t span = (time - t.start) / t.span_ns;
  while (span >= LiveTimeline::kMaxSpans) {
    // Twice as wide: each new span the most of two old ones.
    for (size_t i = 0; i < t.most.size(); i += 2) {
      t.most[i / 2] = std::max(t.most[i], i + 1 < t.most.size() ? t.most[i + 1] : 0);
    }
    t.most.resize((t.most.size() + 1) / 2);
    t.span_ns *= 2;
    span = (time - t.start) / t.span_ns;
  }
  // The spans without a change held what was live before this one.
  if (t.most.size() <= span) t.most.resize(span + 1, before);
  t.most[span] = std::max({t.most[span], before, stats_.live_bytes});
}

void Allocations::Compact() {
  // A block freed by the peak is in neither answer, nor in any later peak.
  std::vector<size_t> index(blocks_.size());
  size_t kept = 0, peak_end = 0;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    if (blocks_[i].freed != kLive && blocks_[i].freed <= peak_sequence_) continue;
    index[i] = kept;
    blocks_[kept++] = blocks_[i];
    if (i < peak_end_) peak_end = kept;
  }
  blocks_.resize(kept);
  peak_end_ = peak_end;
  for (auto& [ptr, i] : live_) i = index[i];
  compact_at_ = std::max<size_t>(4096, 2 * kept);
}

}  // namespace sample::report
