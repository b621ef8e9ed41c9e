// Text views of a Recording in perf report's --stdio layout: a header of
// '#' comment lines, the flat profile table, and under each entry (with
// call graphs on) the call tree drawn with perf's |-- / --- connectors.
// Pure formatting: takes computed entries, returns text.
#pragma once

#include <string>
#include <vector>

#include "libsample/profile.h"
#include "report/report_pipeline.h"

namespace sample::report {

struct TextOptions {
  uint32_t event = 0;  // the event whose section this is
  bool children = false;
  bool call_graph = false;
  double percent_limit = 0;      // hide entries below this share (percent)
  double graph_threshold = 0.5;  // hide call-graph branches below this share
  std::vector<SortKey> sort_keys;
};

std::string FormatTextReport(const Recording& recording, const std::vector<FlatEntry>& entries,
                             const TextOptions& options);

}  // namespace sample::report
