// OffCpuIntervals: pairs each thread's switch-out with its next switch-in.
//
// An off-CPU recording (sample-record --off-cpu) holds, per thread, a
// sched:sched_switch sample where it left the CPU (its call chain) and a
// PERF_RECORD_SWITCH where it came back. Fed in time order, this pairs
// them: the interval is the time the thread was off the CPU, the weight of
// its switch-out sample. A thread switched out while still runnable
// (preempted: the switch-out record says so) was waiting for a CPU, not
// blocked; its interval says so. A switch-out with no
// switch-in (the thread exited, the recording ended, a record was lost) is
// left out, never guessed. Holds only the open intervals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace sample::report {

struct OffCpuInterval {
  size_t sample = 0;       // the caller's handle of the switch-out sample
  uint64_t blocked = 0;    // ns off the CPU
  bool preempted = false;  // still runnable: waiting for a CPU, not blocked
};

struct OffCpuStats {
  uint64_t intervals = 0;  // closed by a switch-in
  uint64_t unmatched = 0;  // switch-outs that never came back
};

class OffCpuIntervals {
 public:
  // `tid` left the CPU at `time`. A pending switch-out of the same thread
  // (its switch-in was lost) is dropped as unmatched.
  void SwitchedOut(uint32_t tid, uint64_t time, size_t sample);
  // The open interval of `tid` began with a preemption.
  void MarkPreempted(uint32_t tid);
  // `tid` came back at `time`: the interval it closes, if one is open.
  std::optional<OffCpuInterval> SwitchedIn(uint32_t tid, uint64_t time);
  // The thread is gone: its open interval never closes.
  void Exited(uint32_t tid);
  // The samples of every interval left open or dropped, in sample order;
  // the open ones count as unmatched from here.
  std::vector<size_t> TakeUnmatched();
  const OffCpuStats& stats() const { return stats_; }

 private:
  struct Open {
    uint64_t time = 0;
    size_t sample = 0;
    bool preempted = false;
  };
  void Drop(const Open& open);

  std::unordered_map<uint32_t, Open> open_;
  std::vector<size_t> unmatched_;
  OffCpuStats stats_;
};

}  // namespace sample::report
