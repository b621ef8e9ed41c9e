// The text of --stats: the loader's and unwinder's counters, as perf report
// --stats' "Aggregated stats" followed by our own problem counts.
#pragma once

#include <string>

#include "report/views/header_view.h"
#include "report/load/recording.h"

namespace sample::report {

std::string FormatStatsText(const HeaderView& header, const LoadStats& stats);

}  // namespace sample::report
