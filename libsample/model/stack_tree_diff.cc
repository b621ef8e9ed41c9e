#include "libsample/model/stack_tree_diff.h"

#include <map>
#include <string>
#include <utility>

#include "libsample/percent.h"
#include "libsample/string_parts.h"

namespace sample {
namespace {

// What names a node across Profiles: a command's name, or a function's DSO
// basename and label ('\1' keeps the two kinds apart).
std::string NodeKey(const StackNode& node, const Profile& profile) {
  if (node.function == StackNode::kNone) {
    return node.comm == StackNode::kNone ? std::string() : "\1" + profile.comm(node.comm);
  }
  const Function& f = profile.function(node.function);
  return Basename(profile.dso_name(f.dso)) + '\0' + FunctionLabel(f);
}

}  // namespace

StackTreeDiff::StackTreeDiff(const StackTree& before, const Profile& before_profile,
                             const StackTree& after, const Profile& after_profile) {
  const std::vector<StackNode>& old_nodes = before.nodes();
  std::map<std::pair<uint32_t, std::string>, uint32_t> old_child;
  for (uint32_t id = 1; id < old_nodes.size(); ++id) {
    old_child.emplace(std::pair{old_nodes[id].parent, NodeKey(old_nodes[id], before_profile)}, id);
  }
  std::vector<bool> old_matched(old_nodes.size(), false);
  const std::vector<StackNode>& new_nodes = after.nodes();
  baseline_.resize(new_nodes.size());
  // A node is appended after its parent, so parents are matched first.
  for (uint32_t id = 0; id < new_nodes.size(); ++id) {
    uint32_t old_id = StackTree::kRoot;
    if (id != StackTree::kRoot) {
      const uint32_t parent = baseline_[new_nodes[id].parent].node;
      if (parent == StackNode::kNone) continue;
      auto it = old_child.find({parent, NodeKey(new_nodes[id], after_profile)});
      if (it == old_child.end()) continue;
      old_id = it->second;
    }
    const StackNode& old = old_nodes[old_id];
    baseline_[id] = {old_id, old.total_samples, old.total_period, old.self_samples,
                     old.self_period};
    old_matched[old_id] = true;
  }
  for (uint32_t id = 1; id < old_nodes.size(); ++id) {
    if (old_matched[id] || !old_matched[old_nodes[id].parent]) continue;
    unmatched_samples_ += old_nodes[id].total_samples;
    unmatched_period_ += old_nodes[id].total_period;
  }
  before_root_samples_ = old_nodes[StackTree::kRoot].total_samples;
  before_root_period_ = old_nodes[StackTree::kRoot].total_period;
}

double StackTreeDiff::Delta(const StackTree& after, uint32_t node, bool by_period) const {
  const StackNode& now = after.node(node);
  const StackNode& root = after.node(StackTree::kRoot);
  const BaselinePath& then = baseline_[node];
  if (by_period) {
    return Percentage(now.total_period, root.total_period) -
           Percentage(then.total_period, before_root_period_);
  }
  return Percentage(now.total_samples, root.total_samples) -
         Percentage(then.total_samples, before_root_samples_);
}

}  // namespace sample
