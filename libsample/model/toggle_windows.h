// ToggleWindows: which samples of a toggled event fall inside its on..off
// windows (toggle events, `-e 'cpu-clock,uprobe:./app:f/on=cpu-clock/,
// uretprobe:./app:f/off=cpu-clock/'`).
//
// Fed the recording's samples in time order: a trigger's sample switches
// its targets for the thread (or CPU) it fired in; a toggled event's
// sample is inside when its thread's (CPU's) switch is on. Switches count
// depth, so nested and recursive calls (on, on, off, off) make one window
// that ends at the outermost off; an off at depth 0 (a return from a call
// entered before the recording began) is counted, not a window. A window
// still open at the end counts as one. Plain value; owns nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace sample {

struct ToggleRelation {
  uint32_t trigger = 0;  // event index
  uint32_t target = 0;   // event index
  bool on = false;
  bool per_cpu = false;  // toggle=cpu: the trigger's CPU, else its thread
  bool target_starts_on = false;
};

// What happened to one toggled event.
struct ToggleStats {
  bool toggled = false;
  uint64_t windows = 0;        // on..off windows opened (start=on: one per thread or CPU seen)
  uint64_t inside = 0;         // samples inside a window
  uint64_t outside = 0;        // samples outside
  uint64_t unmatched_off = 0;  // offs while already off
};

// What a trigger's hit did to one target.
enum class ToggleChange { kNone, kOpened, kClosed };

class ToggleWindows {
 public:
  ToggleWindows() = default;
  ToggleWindows(std::vector<ToggleRelation> relations, size_t event_count);

  bool active() const { return !relations_.empty(); }
  bool IsTrigger(uint32_t event) const {
    return event < triggers_.size() && !triggers_[event].empty();
  }
  bool IsToggled(uint32_t event) const { return event < stats_.size() && stats_[event].toggled; }
  // A trigger's hit; `on_change` is called with (target, change) for each
  // target whose window opened or closed.
  template <typename F>
  void Trigger(uint32_t event, uint32_t tid, uint32_t cpu, F&& on_change) {
    if (!IsTrigger(event)) return;
    for (uint32_t r : triggers_[event]) {
      const ToggleRelation& rel = relations_[r];
      const ToggleChange change = Switch(rel, rel.per_cpu ? cpu : tid);
      if (change != ToggleChange::kNone) on_change(rel.target, change);
    }
  }
  void Trigger(uint32_t event, uint32_t tid, uint32_t cpu) {
    Trigger(event, tid, cpu, [](uint32_t, ToggleChange) {});
  }
  // Whether a sample of `event` is inside a window (always for events no
  // trigger switches); counts it as inside or outside.
  bool Inside(uint32_t event, uint32_t tid, uint32_t cpu);
  // The current depth of `event`'s switch for a thread or CPU.
  uint32_t Depth(uint32_t event, uint32_t key);

  // By event index.
  const std::vector<ToggleStats>& stats() const { return stats_; }
  const std::vector<ToggleRelation>& relations() const { return relations_; }

 private:
  ToggleChange Switch(const ToggleRelation& rel, uint32_t key);
  uint32_t& DepthOf(uint32_t event, uint32_t key);

  std::vector<ToggleRelation> relations_;
  std::vector<std::vector<uint32_t>> triggers_;  // by event: its relations
  std::vector<bool> per_cpu_;                    // by toggled event
  std::vector<bool> starts_on_;                  // by toggled event
  std::vector<ToggleStats> stats_;
  std::unordered_map<uint64_t, uint32_t> depth_;  // (event << 32 | tid or cpu) -> depth
};

}  // namespace sample
