// The text of --header / --header-only, in perf report --header's layout: a
// '#' block of "key : value" lines from a HeaderView.
#pragma once

#include <string>

#include "report/header_view.h"

namespace sample::report {

std::string FormatHeaderText(const HeaderView& header);

// Whether the file was finalized and how much of it was read: the header's
// "file" line, repeated at the end of --stats.
std::string FileStateText(const HeaderView& header);

// What the counts are and how many of them were multiplexed: the header's
// "counts" line, the heading of --stats' counts.
std::string CountsSummaryText(const CountsInfo& counts);

}  // namespace sample::report
