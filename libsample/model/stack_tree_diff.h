// StackTreeDiff: the weights a baseline StackTree gives the call paths of a
// new one, for differential flame graphs (frames as wide as the new
// recording says, coloured by how their share changed). A path is matched
// step by step from the root: command nodes by command name, function nodes
// by the basename of their DSO and their label (as ProfileDiff matches
// functions), since the two trees come from different Profiles.
//
// Owns only the per-node baseline weights, parallel to the new tree's
// nodes; read it with the new tree it was built from.
#pragma once

#include <cstdint>
#include <vector>

#include "libsample/model/profile.h"
#include "libsample/model/stack_tree.h"

namespace sample {

// What the baseline has on one path of the new tree (zeros: no such path).
struct BaselinePath {
  uint32_t node = StackNode::kNone;  // the baseline tree's node, kNone if absent
  uint64_t total_samples = 0;
  uint64_t total_period = 0;
  uint64_t self_samples = 0;
  uint64_t self_period = 0;
};

class StackTreeDiff {
 public:
  // `before` and `after` need not be sorted.
  StackTreeDiff(const StackTree& before, const Profile& before_profile, const StackTree& after,
                const Profile& after_profile);

  // Parallel to the new tree's nodes().
  const std::vector<BaselinePath>& baseline() const { return baseline_; }
  const BaselinePath& baseline(uint32_t node) const { return baseline_[node]; }
  // The change of a node's total share of its tree's root, in percentage
  // points (new share - baseline share), by samples or by period. Positive:
  // the path takes more of the new recording (a flame graph draws it red).
  // `after` is the new tree this diff was built with.
  double Delta(const StackTree& after, uint32_t node, bool by_period) const;
  // The baseline's weight on paths the new tree does not have (a flame
  // graph with the new widths cannot draw them; say how much is missing).
  uint64_t unmatched_samples() const { return unmatched_samples_; }
  uint64_t unmatched_period() const { return unmatched_period_; }

 private:
  uint64_t before_root_samples_ = 0;
  uint64_t before_root_period_ = 0;
  std::vector<BaselinePath> baseline_;
  uint64_t unmatched_samples_ = 0;
  uint64_t unmatched_period_ = 0;
};

}  // namespace sample
