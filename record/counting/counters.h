// EventCounters: the counting mode's events (sample-record --stat), open on
// a target without ring buffers, read with read(2).
//
// Each event is opened on every (thread, CPU) pair the target needs: a
// command, -p and -t on their threads on any CPU (cpu = -1, inherited into
// children for a command, so one fd per event sums the whole tree), -a/-C
// on each CPU for every process. The kernel reports each fd's count with
// the time it was enabled and running (PERF_FORMAT_TOTAL_TIME_ENABLED and
// _RUNNING); an event's CountedEvent is their sum over its fds. Group members
// are opened with their leader's fd, so they are scheduled together, and
// read in one read(2) of the leader (PERF_FORMAT_GROUP | PERF_FORMAT_ID),
// or one fd at a time where the kernel refuses that with inherit. An event this kernel or machine
// lacks (ENOENT, EOPNOTSUPP, as hardware events without a PMU) is kept as <not supported> rather
// than failing the run, as perf stat does. Owns the fds.
#pragma once

#include <linux/perf_event.h>

#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "libsample/events/event_spec.h"
#include "libsample/perf/perf_event.h"
#include "libsample/result.h"
#include "record/counting/count_table.h"
#include "record/events/counter_reads.h"
#include "record/target/record_target.h"

namespace sample::record {

class EventCounters {
 public:
  // Opens every spec on `target`; for a command they start at its exec.
  static Result<EventCounters> Open(std::vector<EventSpec> specs, const RecordTarget& target);

  // Turns the events on (a command's turn on at its exec).
  Result<void> Enable();
  void Disable();
  // The events' totals so far, in the order of the specs.
  Result<std::vector<CountedEvent>> Read() const;
  const std::vector<EventSpec>& specs() const { return specs_; }

 private:
  struct Opened {
    size_t spec;
    PerfEvent event;
    bool group_read = false;  // a leader read with PERF_FORMAT_GROUP
    bool via_leader = false;  // a member whose value its leader's read gives
    bool every_cpu = false;   // a probe opened per CPU for every process (OpenedOnEveryCpu)
  };
  EventCounters(std::vector<EventSpec> specs, std::vector<bool> supported)
      : specs_(std::move(specs)),
        supported_(std::move(supported)),
        every_cpu_(specs_.size(), false) {}
  Result<void> OpenOn(pid_t thread, int cpu, bool on_exec, bool inherit);

  std::vector<EventSpec> specs_;
  std::vector<bool> supported_;  // per spec
  std::vector<bool> every_cpu_;  // per spec: opened per CPU for every process
  std::vector<Opened> opened_;
  std::unordered_map<uint64_t, size_t> spec_of_id_;  // event id -> its spec
  bool on_exec_ = false;
  bool group_reads_ = true;  // until the kernel refuses them
};

// The counting attribute of `spec`: no sampling, times read with the count.
perf_event_attr CountingAttr(const EventSpec& spec, bool on_exec, bool inherit);

// The events perf stat counts when -e is not given; the hardware ones show
// as <not supported> where there is no PMU.
const char* DefaultCountingEvents();

}  // namespace sample::record
