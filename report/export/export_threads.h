// ExportThreads: what the timeline exports (speedscope, gecko) share: the
// kept samples of each section split per thread, in time order, threads
// sorted by section, then pid, then tid, so that equal recordings give equal
// files; the clock the timelines count from; and which events count time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/export/export_input.h"

namespace sample::report {

struct ExportThread {
  size_t section = 0;  // index into ExportInput::sections
  uint32_t pid = 0;
  uint32_t tid = 0;
  // The command name of the thread's last kept sample: a thread that calls
  // exec is named after what it became, as perf's gecko script names it.
  std::string comm;
  std::vector<uint32_t> samples;  // indexes into Profile::samples(), by time
};

std::vector<ExportThread> SplitByThread(const ExportInput& input);

// The timelines' zero, on the samples' clock (ns): the recording's start
// when the file says it (start_clock_ns) and no kept sample is earlier, else
// the earliest kept sample; 0 without samples.
uint64_t TimelineZero(const ExportInput& input);

// The wall-clock time (ns since the epoch) at `clock_ns` on the samples'
// clock, when the file records both clocks at its start.
std::optional<uint64_t> RealtimeAt(const ExportInput& input, uint64_t clock_ns);

// The event counts nanoseconds (cpu-clock, task-clock): its sample periods
// are the time each sample stands for.
bool CountsTime(const ExportInput& input, uint32_t event);

// The sampling interval of `event` in ms: 1000 / -F, or a time event's
// fixed period; 1 when neither is known.
double IntervalMs(const ExportInput& input, uint32_t event);

}  // namespace sample::report
