// The text of --header / --header-only, in perf report --header's layout: a
// '#' block of "key : value" lines from a HeaderView.
#pragma once

#include <string>

#include "report/views/header_view.h"

namespace sample::report {

std::string FormatHeaderText(const HeaderView& header);

// Whether the file was finalized and how much of it was read: the header's
// "file" line, repeated at the end of --stats.
std::string FileStateText(const HeaderView& header);

// What the counts are and how many of them were multiplexed: the header's
// "counts" line, the heading of --stats' counts.
std::string CountsSummaryText(const CountsInfo& counts);

// "cpu-clock: on by A, off by B, per thread; 12 windows; 300 samples
// inside, 700 outside (left out; --no-toggle keeps them)".
std::string ToggleText(const ToggleInfo& toggle);
// How long sampling was on (-D, --control): the header's "enabled" line,
// "3 windows, 1.520 s of 4.010 s".
std::string ControlSummaryText(const ControlInfo& control);
// ", throttled 3 times for 12.3 ms" when the kernel throttled sampling on
// that CPU (PERF_RECORD_THROTTLE); empty otherwise.
std::string ThrottledText(const CpuCounts& counts);

}  // namespace sample::report
