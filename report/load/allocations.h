// Allocations: pairs the calls of an --alloc recording into blocks, each
// from the allocation that made it to the free that ended it, and keeps
// what the report's pseudo-events need: each allocation's size, the
// blocks still live at the end (leaks) and at the moment the live total
// peaked.
//
// Fed in time order, per thread:
//   Enter   an allocating call began (its size, and realloc's old pointer);
//   Return  an allocating function returned a pointer;
//   Free    free or operator delete of a pointer.
// A call made while another probed call is in flight on the same thread
// (operator new's malloc, reallocarray's realloc) is part of the outer one
// and is counted once, as the outer; so is a free of the pointer a realloc
// in flight was given (realloc(p, 0) frees p). A Free right after a Free
// of the same pointer on the same thread is the same free (operator
// delete calls free). Frees of pointers never seen allocated
// (allocated before the recording began, or by a call left out with -c or
// a minimum size) are counted apart, never as negative leaks. A return
// whose call was not seen is ignored; a call whose return never came (a
// lost record, the thread ended) is unpaired and left out.
//
// `handle` is the caller's name for the call (the loader's sample index);
// what it gets back names the calls by it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace sample::report {

struct AllocStats {
  uint64_t allocations = 0;      // paired calls that returned a block
  uint64_t allocated_bytes = 0;  // their sizes
  uint64_t failed = 0;           // returned NULL
  uint64_t nested = 0;           // calls inside another probed call
  uint64_t unpaired = 0;         // calls whose return was never seen
  uint64_t frees = 0;            // of blocks allocated while recording
  uint64_t unknown_frees = 0;    // of pointers never seen allocated
  uint64_t live_bytes = 0;       // at the end: leaked
  uint64_t live_blocks = 0;
  uint64_t peak_bytes = 0;  // the largest live total
  uint64_t peak_time = 0;   // when it was first reached
};

// The live total over time: the most live in each of equal spans from
// the first allocation on (span_ns doubles as the recording goes on, so
// that there are at most kMaxSpans).
struct LiveTimeline {
  static constexpr size_t kMaxSpans = 256;
  uint64_t start = 0;  // time of the first span's start
  uint64_t span_ns = 1'000'000;
  std::vector<uint64_t> most;  // bytes, one per span
};

// A block, named by the handle of the call that allocated it.
struct AllocBlock {
  size_t handle = 0;
  uint64_t size = 0;
};

class Allocations {
 public:
  // `function` tells entries and returns of one function apart from
  // others (any id, the same for a function's call and its return).
  // `old_ptr`: realloc's pointer argument. `sp`, the stack pointer at the
  // call, when the sample has it: a call in flight whose stack pointer is
  // below it (or the same, for the same function: a loop's next call from
  // one frame) has returned unseen (a return probe not yet on while
  // attaching, a lost record), and is unpaired; one above it holds this
  // call (a tail call, realloc(NULL) jumping to malloc, has the same).
  void Enter(uint32_t tid, uint32_t function, uint64_t size, std::optional<uint64_t> old_ptr,
             size_t handle, std::optional<uint64_t> sp = std::nullopt);
  // The block the call made, when the return completes a call that
  // counts (not nested, not NULL); the call's size is its size.
  std::optional<AllocBlock> Return(uint32_t tid, uint32_t function, uint64_t time, uint64_t ptr);
  void Free(uint32_t tid, uint64_t time, uint64_t ptr);
  // The thread is gone: its calls in flight never return.
  void Exited(uint32_t tid);

  // The handles of calls that made no block (nested, unpaired, failed),
  // in no particular order; the calls in flight count as unpaired from here.
  std::vector<size_t> TakeDropped();
  // The blocks live now (after the last record: the leaks).
  std::vector<AllocBlock> LiveBlocks() const;
  // The blocks live when the live total peaked.
  std::vector<AllocBlock> PeakBlocks() const;
  const AllocStats& stats() const { return stats_; }
  const LiveTimeline& timeline() const { return timeline_; }

 private:
  struct Call {
    uint32_t function = 0;
    uint64_t size = 0;
    std::optional<uint64_t> old_ptr;
    size_t handle = 0;
    bool nested = false;
    std::optional<uint64_t> sp;
  };
  struct Thread {
    std::vector<Call> calls;  // in flight, innermost last
    uint64_t last_free = 0;   // the pointer of its last Free, until its next call
  };
  struct Block {
    size_t handle = 0;
    uint64_t size = 0;
    uint64_t freed = kLive;  // the sequence number of its free
  };
  static constexpr uint64_t kLive = UINT64_MAX;

  // Ends the block at `ptr`; false when no block starts there.
  bool Release(uint64_t ptr);
  void Add(uint64_t ptr, const Call& call, uint64_t time);
  // Forgets the blocks that can be neither leaks nor in the peak.
  void Compact();
  // The live total changed at `time` (from `before`).
  void Note(uint64_t time, uint64_t before);

  std::unordered_map<uint32_t, Thread> threads_;
  std::unordered_map<uint64_t, size_t> live_;  // pointer -> index in blocks_
  std::vector<Block> blocks_;                  // in allocation order
  std::vector<size_t> dropped_;
  uint64_t sequence_ = 0;  // events so far
  uint64_t peak_sequence_ = 0;
  size_t peak_end_ = 0;       // blocks_[0, peak_end_) were allocated by the peak
  size_t compact_at_ = 4096;  // blocks_'s size that triggers Compact
  AllocStats stats_;
  LiveTimeline timeline_;
};

}  // namespace sample::report
