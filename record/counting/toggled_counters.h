// ToggledCounters: counting only inside on..off windows (sample-record
// --stat with on=/off= triggers), exactly, on kernels without a toggle
// ioctl.
//
// Each toggled event's group (the event, or its group's leader and
// members) is opened with its triggers as extra members that sample every
// hit with PERF_SAMPLE_READ of the whole group: every on and off carries
// the counters' values at that moment, and a window's count is the
// difference. Windows are tracked per thread (toggle=thread: per-thread
// counters on any CPU, the threads of the target at the start, without
// inherit, because the kernel maps no ring buffer for an inherited
// per-thread event) or per CPU (toggle=cpu, with -a/-C: per-CPU counters),
// with depth for nesting (libsample/model/toggle_windows.h). A window
// still open at the end is closed with the final read. A trigger toggling
// several events is opened once in each group. The triggers' own rows are
// their hit counts, from the kernel's count (exact even when the ring
// lost samples, which is reported). Owns the fds and rings.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "libsample/events/event_spec.h"
#include "libsample/model/toggle_windows.h"
#include "libsample/perf/perf_event.h"
#include "libsample/perf/perf_record.h"
#include "libsample/result.h"
#include "record/counting/count_table.h"
#include "record/target/record_target.h"

namespace sample::record {

// Whether `spec` is counted by ToggledCounters (a toggled event or a
// trigger) rather than EventCounters.
bool CountedInWindows(const EventSpec& spec);

class ToggledCounters {
 public:
  // Opens the toggled groups of `specs` (the whole -e list) with their
  // triggers on `target`; for a command they start at its exec.
  static Result<ToggledCounters> Open(const std::vector<EventSpec>& specs,
                                      const RecordTarget& target);

  Result<void> Enable();
  void Disable();
  // Takes the trigger hits the rings hold so far.
  void Drain();
  // Sets the entries of `counts` (indexed like the specs) for the events
  // counted here: a toggled event's counts inside its windows, a trigger's
  // hits. Drains first.
  Result<void> Fill(std::vector<CountedEvent>* counts);
  // Notes for the end of the table (lost hits, threads not followed).
  std::vector<std::string> Notes() const;

 private:
  // A toggled group: its counters, and one trigger instance per trigger.
  struct Group {
    std::vector<size_t> counters;  // spec indices: leader, then members
    std::vector<size_t> triggers;  // spec indices of its trigger instances
  };
  // The fds of one group on one thread (or CPU).
  struct Site {
    size_t group = 0;
    uint32_t key = 0;               // the thread, or the CPU
    std::vector<PerfEvent> events;  // counters, then triggers; the first trigger owns the ring
  };
  // Per (group, key): the counters' values when its window opened.
  struct Snapshot {
    std::vector<uint64_t> values;
    uint64_t enabled = 0, running = 0;
  };
  struct Sums {
    std::vector<uint64_t> values;  // per counter of the group
    uint64_t enabled = 0, running = 0;
  };

  ToggledCounters() = default;
  // Refuses a trigger whose scope the target cannot count in (toggle=thread
  // with -a/-C, toggle=cpu without).
  Result<void> CheckScopes() const;
  // The groups of toggled counters, the trigger instances and the windows'
  // relations between them.
  void PlanGroups();
  // Opens group `g` with its triggers on `key` (a thread, or a CPU) and
  // maps its ring.
  Result<void> OpenSite(size_t g, int key);
  // Trigger instance `instance` as a member of the group led by `leader_fd`.
  Result<PerfEvent> OpenTrigger(size_t instance, pid_t pid, int cpu, int leader_fd);
  void Process(std::span<const std::byte> records);
  // The group's counters' values in a read, in the group's counter order.
  std::vector<uint64_t> CounterValues(const Group& group, const ReadValues& read) const;
  void CloseWindow(size_t group, uint32_t key, const std::vector<uint64_t>& values,
                   uint64_t enabled, uint64_t running);

  std::vector<EventSpec> specs_;
  std::vector<Group> groups_;
  // Trigger instances: (group, trigger spec, the relation's index in windows_).
  std::vector<std::pair<size_t, size_t>> instances_;
  std::vector<Site> sites_;
  std::vector<perf_event_attr> trigger_attrs_;  // by instance
  std::map<uint64_t, size_t> instance_of_id_;   // trigger fd id -> instance
  std::map<uint64_t, size_t> counter_of_id_;    // counter fd id -> spec
  ToggleWindows windows_;                       // events: instances, then groups
  std::map<std::pair<size_t, uint32_t>, Snapshot> open_;
  std::vector<Sums> sums_;  // per group
  bool on_exec_ = false;
  bool per_cpu_ = false;
  uint64_t lost_ = 0;
  size_t threads_ = 0;
  bool inherit_wanted_ = false;
};

}  // namespace sample::record
