#include "libsample/model/toggle_windows.h"

#include <utility>

namespace sample {

ToggleWindows::ToggleWindows(std::vector<ToggleRelation> relations, size_t event_count)
    : relations_(std::move(relations)),
      triggers_(event_count),
      per_cpu_(event_count, false),
      starts_on_(event_count, false),
      stats_(event_count) {
  for (uint32_t r = 0; r < relations_.size(); ++r) {
    const ToggleRelation& rel = relations_[r];
    if (rel.trigger >= event_count || rel.target >= event_count) continue;
    triggers_[rel.trigger].push_back(r);
    stats_[rel.target].toggled = true;
    per_cpu_[rel.target] = rel.per_cpu;
    starts_on_[rel.target] = rel.target_starts_on;
  }
}

uint32_t& ToggleWindows::DepthOf(uint32_t event, uint32_t key) {
  const auto [it, inserted] = depth_.try_emplace((static_cast<uint64_t>(event) << 32) | key, 0);
  if (inserted && starts_on_[event]) {
    it->second = 1;
    ++stats_[event].windows;
  }
  return it->second;
}

uint32_t ToggleWindows::Depth(uint32_t event, uint32_t key) {
  return event < stats_.size() && stats_[event].toggled ? DepthOf(event, key) : 0;
}

ToggleChange ToggleWindows::Switch(const ToggleRelation& rel, uint32_t key) {
  uint32_t& depth = DepthOf(rel.target, key);
  if (rel.on) {
    if (depth++ == 0) {
      ++stats_[rel.target].windows;
      return ToggleChange::kOpened;
    }
    return ToggleChange::kNone;
  }
  if (depth == 0) {
    ++stats_[rel.target].unmatched_off;
    return ToggleChange::kNone;
  }
  return --depth == 0 ? ToggleChange::kClosed : ToggleChange::kNone;
}

bool ToggleWindows::Inside(uint32_t event, uint32_t tid, uint32_t cpu) {
  if (!IsToggled(event)) return true;
  const bool inside = DepthOf(event, per_cpu_[event] ? cpu : tid) > 0;
  ++(inside ? stats_[event].inside : stats_[event].outside);
  return inside;
}

}  // namespace sample
