// Ring size: how many data pages each CPU's ring buffer gets when -m is not
// given.
//
// perf's default, 512 KiB, holds a tenth of a second of -g samples at the
// default 4 kHz, but 62 samples with 8 KiB user stack copies: 1.2 ms of
// them at 50 kHz, less than a draining thread can count on being run in
// on busy CPUs. Where the data rate is known (a sampling frequency and a
// stack copy size), the ring is sized to hold kRingStallBudgetMs of it.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sample::record {

constexpr size_t kDefaultRingPages = 128;                 // 512 KiB with 4 KiB pages
constexpr uint64_t kRingStallBudgetMs = 10;               // of samples a ring holds
constexpr size_t kLargestChosenRingBytes = 8 << 20;       // per CPU
constexpr uint64_t kLargestChosenTotalBytes = 256 << 20;  // all rings

struct RingLimits {
  size_t page_size = 4096;
  size_t rings = 1;            // CPUs with a ring
  uint64_t memory_bytes = 0;   // physical memory; rings take at most 1/16
  bool may_lock_more = false;  // CAP_IPC_LOCK: beyond perf_event_mlock_kb
};

// The data bytes per second one CPU's ring receives from the events in
// `attrs` that copy user stacks at a sampling frequency (0 when none do:
// the size of their other samples depends on the call chains, and a fixed
// period says nothing of the rate).
uint64_t StackCopyBytesPerSecond(const std::vector<perf_event_attr>& attrs);

// Data pages per ring: kDefaultRingPages, or, for a rate that would fill
// them within kRingStallBudgetMs, the power of two that holds that much,
// at most kLargestChosenRingBytes, and halved while all rings together
// would take more than kLargestChosenTotalBytes or 1/16 of memory. Without
// CAP_IPC_LOCK the default stays: more would count against RLIMIT_MEMLOCK
// and could fail where the default works.
size_t ChooseRingPages(uint64_t bytes_per_second, const RingLimits& limits);

// What stderr says of `pages` chosen (no -m) for `attrs`: empty for the
// default; else the size and the stack copy rate that made it.
std::string ChosenRingNote(size_t pages, const std::vector<perf_event_attr>& attrs);

}  // namespace sample::record
