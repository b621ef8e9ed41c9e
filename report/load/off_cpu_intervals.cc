#include "report/load/off_cpu_intervals.h"

#include <algorithm>

namespace sample::report {

void OffCpuIntervals::SwitchedOut(uint32_t tid, uint64_t time, size_t sample) {
  auto [it, inserted] = open_.try_emplace(tid, Open{time, sample, false});
  if (!inserted) {
    Drop(it->second);
    it->second = Open{time, sample, false};
  }
}

void OffCpuIntervals::MarkPreempted(uint32_t tid) {
  auto it = open_.find(tid);
  if (it != open_.end()) it->second.preempted = true;
}

std::optional<OffCpuInterval> OffCpuIntervals::SwitchedIn(uint32_t tid, uint64_t time) {
  auto it = open_.find(tid);
  if (it == open_.end()) return std::nullopt;
  const Open open = it->second;
  open_.erase(it);
  // Records are merged by time, so a switch-in before its switch-out means
  // the clock or the data is wrong: not an interval.
  if (time < open.time) {
    Drop(open);
    return std::nullopt;
  }
  ++stats_.intervals;
  return OffCpuInterval{open.sample, time - open.time, open.preempted};
}

void OffCpuIntervals::Exited(uint32_t tid) {
  auto it = open_.find(tid);
  if (it == open_.end()) return;
  Drop(it->second);
  open_.erase(it);
}

std::vector<size_t> OffCpuIntervals::TakeUnmatched() {
  for (const auto& [tid, open] : open_) Drop(open);
  open_.clear();
  std::vector<size_t> out = std::move(unmatched_);
  unmatched_.clear();
  std::sort(out.begin(), out.end());
  return out;
}

void OffCpuIntervals::Drop(const Open& open) {
  ++stats_.unmatched;
  unmatched_.push_back(open.sample);
}

}  // namespace sample::report
