// RunCounting: sample-record --stat, counting instead of sampling.
//
// Opens the events as counters on the target (EventCounters), lets the
// command run (or counts the processes, threads or CPUs until they end, the
// duration runs out or SIGINT), prints each interval's deltas with -I,
// repeats a command -r times, and prints perf stat's table (stat_table.h)
// on stderr at the end.
#pragma once

#include <cstdint>

#include "libsample/result.h"
#include "record/counting/count_table.h"
#include "record/recorder.h"

namespace sample::record {

struct CountingOptions {
  uint64_t interval_ms = 0;  // -I; 0: only the final table
  int repeat = 1;            // -r
  CountLayout layout;        // -x SEP, -j
  bool write_file = false;   // -o given: the counts go into RecordOptions::output too
};

// Returns the exit status of the (last run of the) command, shell-style,
// or 0 without a command.
Result<int> RunCounting(const RecordOptions& options, const CountingOptions& stat);

}  // namespace sample::record
