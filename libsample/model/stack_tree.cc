#include "libsample/model/stack_tree.h"

#include <algorithm>
#include <string>

namespace sample {

uint32_t StackTree::Child(uint32_t parent, uint32_t function, uint32_t comm) {
  const uint64_t key =
      (uint64_t{parent} << 32) | (function != StackNode::kNone ? function : comm);
  auto [it, inserted] = child_ids_.try_emplace(key, static_cast<uint32_t>(nodes_.size()));
  if (inserted) {
    StackNode node;
    node.function = function;
    node.comm = comm;
    node.parent = parent;
    node.depth = nodes_[parent].depth + 1;
    max_depth_ = std::max(max_depth_, node.depth);
    nodes_[parent].children.push_back(it->second);
    nodes_.push_back(std::move(node));
  }
  return it->second;
}

void StackTree::Add(uint32_t comm, std::span<const uint32_t> frames, uint64_t period,
                    uint64_t samples) {
  uint32_t at = kRoot;
  auto count = [&](uint32_t id) {
    nodes_[id].total_samples += samples;
    nodes_[id].total_period += period;
  };
  count(at);
  if (by_comm_) {
    at = Child(at, StackNode::kNone, comm);
    count(at);
  }
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    at = Child(at, *it, StackNode::kNone);
    count(at);
  }
  nodes_[at].self_samples += samples;
  nodes_[at].self_period += period;
}

void StackTree::Sort(const Profile& profile) {
  std::vector<std::string> labels(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const StackNode& n = nodes_[i];
    if (n.function != StackNode::kNone) {
      labels[i] = FunctionLabel(profile.function(n.function));
    } else if (n.comm != StackNode::kNone) {
      labels[i] = profile.comm(n.comm);
    }
  }
  for (StackNode& n : nodes_) {
    std::stable_sort(n.children.begin(), n.children.end(),
                     [&](uint32_t a, uint32_t b) { return labels[a] < labels[b]; });
  }
}

}  // namespace sample
