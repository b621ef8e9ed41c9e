// StackTree: samples' stacks merged from the root, as flame graphs draw
// them. Each node is a frame reached by one path from the root: the root
// (everything), then optionally one node per command (flame graphs start
// each process's stacks with its name, as flamegraph.pl's input does), then
// functions, outermost first. A node counts the samples and the period of
// every sample whose stack passes through it (total) and of those whose
// stack ends there (self).
//
// Built by Add, then Sort once (children in name order, as flamegraph.pl
// draws them), then read. Plain data, safe to share read-only.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "libsample/model/profile.h"

namespace sample {

struct StackNode {
  static constexpr uint32_t kNone = UINT32_MAX;
  // A function id of the Profile; kNone for the root and command nodes.
  uint32_t function = kNone;
  // A command node's comm id; kNone for the others.
  uint32_t comm = kNone;
  uint32_t parent = kNone;  // kNone for the root
  uint32_t depth = 0;       // 0 for the root
  uint64_t total_samples = 0;
  uint64_t total_period = 0;
  uint64_t self_samples = 0;
  uint64_t self_period = 0;
  std::vector<uint32_t> children;  // node ids
};

class StackTree {
 public:
  explicit StackTree(bool by_comm) : by_comm_(by_comm) { nodes_.emplace_back(); }

  static constexpr uint32_t kRoot = 0;

  // One sample: `frames` are function ids, leaf first (Profile::frames).
  // `samples` > 1: that many samples of that stack and their summed
  // `period` at once (callers that merge equal stacks first walk each once).
  void Add(uint32_t comm, std::span<const uint32_t> frames, uint64_t period, uint64_t samples = 1);
  // Children by name: commands by their name, functions by their label.
  void Sort(const Profile& profile);

  const std::vector<StackNode>& nodes() const { return nodes_; }
  const StackNode& node(uint32_t id) const { return nodes_[id]; }
  uint32_t max_depth() const { return max_depth_; }

 private:
  uint32_t Child(uint32_t parent, uint32_t function, uint32_t comm);

  bool by_comm_;
  std::vector<StackNode> nodes_;
  struct KeyHash {
    size_t operator()(uint64_t k) const { return static_cast<size_t>(k * 0x9E3779B97F4A7C15ull); }
  };
  // (parent << 32 | function or comm) -> child; commands and functions
  // never share a parent (the root's children are commands when by_comm).
  std::unordered_map<uint64_t, uint32_t, KeyHash> child_ids_;
  uint32_t max_depth_ = 0;
};

}  // namespace sample
