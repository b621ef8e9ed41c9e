// ViewOptions: how the flat profile and its call graphs look (-s, -g,
// --children, -n, --percent-limit, ...), what every printer of the views
// and the browser read.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "libsample/model/flat_profile.h"
#include "report/views/call_graph_spec.h"

namespace sample::report {

// How the flat profile and its call graphs look.
struct ViewOptions {
  std::vector<SortKey> sort_keys = {SortKey::kComm, SortKey::kDso, SortKey::kSym};
  // Children/Self columns; unset: on when the file has call chains.
  std::optional<bool> children;
  std::optional<CallGraphSpec> call_graph;  // unset: no call graph
  bool show_nr_samples = false;             // -n: a Samples column
  bool show_total_period = false;           // a Period column
  double percent_limit = 0;                 // hide entries below this share
  // Percentages of the samples the filters keep (true), or of all samples
  // of the event (perf's --percentage absolute).
  bool relative_percentage = true;
  size_t max_stack = 0;  // 0: whole chains
};

}  // namespace sample::report
