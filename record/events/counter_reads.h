// Reading a perf event fd's counts (read(2) in its read_format): what the
// recorder's closing counts and counting mode (--stat) both read.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "libsample/result.h"

namespace sample::record {

// What read(2) of a perf event fd returns, for `read_format`: the times
// (0 unless asked for) and each value with its id (0 without
// PERF_FORMAT_ID): one, or a group's, the leader's first.
struct CounterRead {
  uint64_t enabled = 0, running = 0;
  std::vector<std::pair<uint64_t, uint64_t>> values;  // (value, id)
};
// Parses the words read; fails when they are fewer than the format needs.
Result<CounterRead> ParseCounterRead(std::span<const uint64_t> words, uint64_t read_format);
Result<CounterRead> ReadCounter(int fd, uint64_t read_format);

// What read(2) of one perf event fd says of the event itself: its count and
// times (0 when `read_format` lacks them). With PERF_FORMAT_GROUP, the
// leader's own value is the group's first.
struct CounterTotals {
  uint64_t count = 0, enabled = 0, running = 0;
};
Result<CounterTotals> ReadCounterTotals(int fd, uint64_t read_format);

// One fd's totals, of event `event` opened on `thread` (-1: a CPU-wide fd).
struct FdTotals {
  size_t event = 0;
  pid_t thread = -1;
  CounterTotals totals;
};

// Each event's totals over its fds. Counts and running times add up. A
// thread's event opened on every CPU has each CPU's copy enabled all the
// while the thread is, running only while the thread is on that CPU: its
// enabled time is one copy's (the longest), not their sum, or every event
// would look multiplexed by the number of CPUs. CPU-wide fds' enabled
// times add up.
std::vector<CounterTotals> SumFdTotals(const std::vector<FdTotals>& fds, size_t events);

}  // namespace sample::record
