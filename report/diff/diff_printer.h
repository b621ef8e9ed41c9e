// The comparison of two recordings (ProfileDiff) as text, laid out as perf
// diff prints it, or as one JSON document. Printing only: the numbers come
// from DiffProfiles.
#pragma once

#include <string>
#include <vector>

#include "report/diff/profile_diff.h"

namespace sample::report {

// What the printers say about the comparison besides its sections.
struct DiffHeading {
  std::string baseline_path;
  std::string new_path;
  bool children = false;
};

// perf diff's table per event: Baseline, Base samples, Delta, Samples,
// Shared Object, Symbol; `periods` adds Base period and Period columns.
// A function only in the new recording has no baseline share (and 0 base
// samples), one only in the baseline has no delta and no new counts.
std::string DiffText(const DiffHeading& heading, const std::vector<DiffSection>& sections,
                     bool periods);

// {"format": "sample-report-diff", "version": 1, "baseline", "new",
//  "children", "sections": [{"event", "baseline": {samples, period},
//  "new": {...}, "entries": [{"symbol", "dso", "kernel", "baseline":
//  {share, samples, period} or null, "new": {...} or null, "delta"}]}]}
std::string DiffJson(const DiffHeading& heading, const std::vector<DiffSection>& sections);

}  // namespace sample::report
