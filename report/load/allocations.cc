#include "report/load/allocations.h"

#include <algorithm>

namespace sample::report {

void Allocations::Enter(const AllocCall& call) {
  ++sequence_;
  Thread& thread = threads_[call.tid];
  thread.last_free = 0;
  while (call.sp && !thread.calls.empty() && thread.calls.back().call.sp) {
    const AllocCall& top = thread.calls.back().call;
    if (*top.sp > *call.sp || (*top.sp == *call.sp && top.function != call.function)) break;
    Unpaired(thread, thread.calls.size() - 1);  // returned, its return unseen
  }
  if (thread.calls.size() >= kMaxInFlight) Unpaired(thread, 0);
  const bool nested = !thread.calls.empty();
  thread.calls.push_back({call, nested});
}

void Allocations::Unpaired(Thread& thread, size_t at) {
  ++stats_.unpaired;
  dropped_.push_back(thread.calls[at].call.handle);
  thread.calls.erase(thread.calls.begin() + static_cast<ptrdiff_t>(at));
}

std::optional<AllocBlock> Allocations::Return(uint32_t pid, uint32_t tid, uint32_t function,
                                              uint64_t time, uint64_t ptr) {
  ++sequence_;
  auto it = threads_.find(tid);
  if (it == threads_.end()) return std::nullopt;
  Thread& thread = it->second;
  thread.last_free = 0;
  // The innermost call of this function; those above it lost their returns.
  auto found = std::find_if(thread.calls.rbegin(), thread.calls.rend(),
                            [&](const Call& c) { return c.call.function == function; });
  if (found == thread.calls.rend()) return std::nullopt;  // its call was not recorded
  const size_t at = static_cast<size_t>(thread.calls.rend() - found) - 1;
  while (thread.calls.size() > at + 1) Unpaired(thread, thread.calls.size() - 1);
  const Call done = thread.calls[at];
  thread.calls.resize(at);
  if (done.nested) {
    ++stats_.nested;
    dropped_.push_back(done.call.handle);
    return std::nullopt;
  }
  const uint64_t before = stats_.live_bytes;
  if (done.call.old_ptr && (ptr != 0 || done.call.size == 0)) {
    // realloc: the old block ends when a new one is returned, and when
    // size 0 frees it (returning NULL).
    if (*done.call.old_ptr != 0) {
      if (Release({pid, *done.call.old_ptr})) {
        ++stats_.frees;
      } else {
        ++stats_.unknown_frees;
      }
    }
  }
  if (ptr == 0) {
    ++stats_.failed;
    dropped_.push_back(done.call.handle);
    Note(time, before);
    return std::nullopt;
  }
  Add({pid, ptr}, done.call, time);
  Note(time, before);
  return AllocBlock{done.call.handle, done.call.size, done.call.weight};
}

void Allocations::Free(uint32_t pid, uint32_t tid, uint64_t time, uint64_t ptr, bool unmap) {
  ++sequence_;
  if (ptr == 0) return;  // free(NULL) frees nothing
  Thread& thread = threads_[tid];
  if (unmap && thread.last_free != 0 && ptr <= thread.last_free && thread.last_free - ptr < 4096) {
    ++stats_.nested;  // free's own munmap of the large block it freed
    return;
  }
  for (const Call& c : thread.calls) {
    if (c.call.old_ptr == ptr) {
      ++stats_.nested;  // realloc's own free: the realloc's return says it
      return;
    }
  }
  const uint64_t before = stats_.live_bytes;
  if (Release({pid, ptr})) {
    ++stats_.frees;
    Note(time, before);
  } else if (unmap) {
    ++stats_.foreign_unmaps;
    return;
  } else if (thread.last_free != ptr) {
    ++stats_.unknown_frees;
  }
  thread.last_free = ptr;
}

void Allocations::Exited(uint32_t tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) return;
  for (const Call& c : it->second.calls) {
    ++stats_.unpaired;
    dropped_.push_back(c.call.handle);
  }
  threads_.erase(it);
}

std::vector<size_t> Allocations::TakeDropped() {
  for (auto& [tid, thread] : threads_) {
    for (const Call& c : thread.calls) {
      ++stats_.unpaired;
      dropped_.push_back(c.call.handle);
    }
    thread.calls.clear();
  }
  return std::move(dropped_);
}

std::vector<AllocBlock> Allocations::LiveBlocks() const {
  std::vector<AllocBlock> out;
  for (const Block& block : blocks_) {
    if (block.freed == kLive) out.push_back({block.handle, block.size, block.weight});
  }
  return out;
}

std::vector<AllocBlock> Allocations::PeakBlocks() const {
  std::vector<AllocBlock> out;
  for (size_t i = 0; i < peak_end_; ++i) {
    const Block& b = blocks_[i];
    if (b.freed > peak_sequence_) out.push_back({b.handle, b.size, b.weight});
  }
  return out;
}

bool Allocations::Release(const Key& key) {
  auto it = live_.find(key);
  if (it == live_.end()) return false;
  Block& block = blocks_[it->second];
  block.freed = sequence_;
  stats_.live_bytes -= block.bytes();
  stats_.live_blocks -= block.weight;
  live_.erase(it);
  return true;
}

void Allocations::Add(const Key& key, const AllocCall& call, uint64_t time) {
  // A block at the same address that was never freed: its free was lost
  // (or happened where no probe saw it); it ends here.
  Release(key);
  const Block block{call.handle, call.size, call.weight};
  stats_.allocations += block.weight;
  stats_.allocated_bytes += block.bytes();
  live_[key] = blocks_.size();
  blocks_.push_back(block);
  stats_.live_bytes += block.bytes();
  stats_.live_blocks += block.weight;
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
  // A freed block is a leak of no answer, nor in any later peak (that
  // comes after now): it is kept only while it is in the peak's set.
  std::vector<size_t> index(blocks_.size());
  size_t kept = 0, peak_end = 0;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const bool in_peak = i < peak_end_ && blocks_[i].freed > peak_sequence_;
    if (blocks_[i].freed != kLive && !in_peak) continue;
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
