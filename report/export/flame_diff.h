// FlameDiff: what a differential flame graph draws for one event: the new
// recording's stack tree (frame widths) and, per node, the baseline's
// weight on the same call path (frame colours: StackTreeDiff::Delta).
// Built from the two ExportInputs of `sample-report --diff BASE --format
// svg`: ExportInput::baseline points the new input at the baseline's.
// Owns both trees and the per-node baseline weights.
#pragma once

#include <cstddef>

#include "libsample/model/stack_tree.h"
#include "libsample/model/stack_tree_diff.h"
#include "report/export/export_input.h"

namespace sample::report {

class FlameDiff {
 public:
  // `after_section`: a section of `after`; the baseline's is the section of
  // `before` with the same event name (none: every path is new). The new
  // tree is sorted by name, as flame graphs draw it.
  FlameDiff(const ExportInput& before, const ExportInput& after, size_t after_section,
            bool by_comm);

  const StackTree& tree() const { return after_; }  // widths
  const StackTreeDiff& diff() const { return diff_; }
  // A node's change in percentage points, by the weight --folded-weight chose.
  double Delta(uint32_t node) const { return diff_.Delta(after_, node, by_period_); }
  // The largest |Delta| of any node but the root: a colour scale's end, so
  // that the frame that changed most is the most saturated.
  double max_abs_delta() const { return max_abs_delta_; }

 private:
  StackTree before_;
  StackTree after_;
  StackTreeDiff diff_;
  bool by_period_;
  double max_abs_delta_ = 0;
};

}  // namespace sample::report
