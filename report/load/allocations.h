// Allocations: pairs the calls of an --alloc recording into blocks, each
// from the allocation that made it to the free that ended it, and keeps
// what the report's pseudo-events need: each allocation's size, the
// blocks still live at the end (leaks) and at the moment the live total
// peaked.
//
// Fed in time order, per thread:
//   Enter   an allocating call began (its size, and realloc's old pointer);
//   Return  an allocating function returned a pointer;
//   Free    free or operator delete of a pointer, or munmap.
// A call made while another probed call is in flight on the same thread
// (operator new's malloc, reallocarray's realloc) is part of the outer one
// and is counted once, as the outer; so is a free of the pointer a realloc
// in flight was given (realloc(p, 0) frees p). A Free right after a Free
// of the same pointer on the same thread is the same free (operator
// delete calls free). Frees of pointers never seen allocated
// (allocated before the recording began, or by a call left out with -c or
// a minimum size) are counted apart, never as negative leaks. A return
// whose call was not seen is ignored; a call whose return never came (a
// lost record, the thread ended) is unpaired and left out. Blocks are
// told apart by process and address (a forked child hands out the
// addresses its parent does); a thread holds at most kMaxInFlight calls
// in flight (real nesting is 2 or 3 deep: a crafted recording's calls that
// never return must not make each call scan thousands).
//
// `handle` is the caller's name for the call (the loader's sample index);
// what it gets back names the calls by it. A call's weight is the calls it
// stands for (1, or N when the kernel kept every Nth): the byte counts
// here are sizes times weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

namespace sample::report {

struct AllocStats {
  uint64_t allocations = 0;      // paired calls that returned a block (weighted)
  uint64_t allocated_bytes = 0;  // their sizes (weighted)
  uint64_t failed = 0;           // returned NULL
  uint64_t nested = 0;           // calls inside another probed call
  uint64_t unpaired = 0;         // calls whose return was never seen
  uint64_t frees = 0;            // of blocks allocated while recording
  uint64_t unknown_frees = 0;    // of pointers never seen allocated
  uint64_t foreign_unmaps = 0;   // munmaps of memory never seen mapped
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
  uint64_t size = 0;    // as asked for
  uint64_t weight = 1;  // the calls its call stands for
};

// One allocating call, as Enter takes it.
struct AllocCall {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t function = 0;  // tells it from other functions (any id, its return's too)
  uint64_t size = 0;
  std::optional<uint64_t> old_ptr;  // realloc's pointer argument
  // The stack pointer at the call, when the sample has it: a call in flight
  // whose stack pointer is below it (or the same, for the same function: a
  // loop's next call from one frame) has returned unseen (a return probe
  // not yet on while attaching, a lost record), and is unpaired; one above
  // it holds this call (a tail call, realloc(NULL) jumping to malloc, has
  // the same).
  std::optional<uint64_t> sp;
  uint64_t weight = 1;
  size_t handle = 0;
};

class Allocations {
 public:
  static constexpr size_t kMaxInFlight = 32;

  void Enter(const AllocCall& call);
  // The block the call made, when the return completes a call that
  // counts (not nested, not NULL); the call's size is its size.
  std::optional<AllocBlock> Return(uint32_t pid, uint32_t tid, uint32_t function, uint64_t time,
                                   uint64_t ptr);
  // `unmap`: munmap's, which ends a block mmap made; one of memory never
  // seen mapped (a file, a mapping older than the recording) is counted
  // apart from the frees, and one right after a free on the same thread
  // in the page below the freed pointer is that free's (glibc unmaps a
  // large block there).
  void Free(uint32_t pid, uint32_t tid, uint64_t time, uint64_t ptr, bool unmap = false);
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
  // The blocks held for the answers (live, or in the peak's set).
  size_t kept_blocks() const { return blocks_.size(); }

 private:
  struct Call {
    AllocCall call;
    bool nested = false;
  };
  struct Thread {
    std::vector<Call> calls;  // in flight, innermost last
    uint64_t last_free = 0;   // the pointer of its last Free, until its next call
  };
  struct Block {
    size_t handle = 0;
    uint64_t size = 0;
    uint64_t weight = 1;
    uint64_t freed = kLive;  // the sequence number of its free
    uint64_t bytes() const { return size * weight; }
  };
  static constexpr uint64_t kLive = UINT64_MAX;
  struct Key {
    uint32_t pid = 0;
    uint64_t ptr = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.ptr * 31 + k.pid); }
  };

  // Drops the call at `at` of `thread`'s calls in flight as unpaired.
  void Unpaired(Thread& thread, size_t at);
  // Ends the block at `key`; false when no block starts there.
  bool Release(const Key& key);
  void Add(const Key& key, const AllocCall& call, uint64_t time);
  // Forgets the blocks that can be neither leaks nor in the peak.
  void Compact();
  // The live total changed at `time` (from `before`).
  void Note(uint64_t time, uint64_t before);

  std::unordered_map<uint32_t, Thread> threads_;
  std::unordered_map<Key, size_t, KeyHash> live_;  // -> index in blocks_
  std::vector<Block> blocks_;                      // in allocation order
  std::vector<size_t> dropped_;
  uint64_t sequence_ = 0;  // events so far
  uint64_t peak_sequence_ = 0;
  size_t peak_end_ = 0;       // blocks_[0, peak_end_) were allocated by the peak
  size_t compact_at_ = 4096;  // blocks_'s size that triggers Compact
  AllocStats stats_;
  LiveTimeline timeline_;
};

}  // namespace sample::report
