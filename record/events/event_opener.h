// EventOpener: turns parsed event specs into open perf events for a target.
//
// For every CPU and every target thread it opens each event (group members
// with their leader's fd), maps one ring buffer per CPU and points every
// other event on that CPU at it with PERF_EVENT_IOC_SET_OUTPUT. Sideband
// tracking (mmap, comm, task, switch) is asked of one event only, so each
// record arrives once: the first, or, when sampling starts late (-D), a
// dummy event added for it that is on from the start (as perf's), so that
// the mappings and names of the time before are known. At the end,
// ReadCounts reads each event's final count. Owns the opened events.
#pragma once

#include <linux/perf_event.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/events/event_spec.h"
#include "libsample/perf/chain_capture.h"
#include "libsample/perf/event_table.h"
#include "libsample/perf/perf_event.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/user_regs.h"
#include "libsample/result.h"
#include "record/events/event_attrs.h"
#include "record/target/record_target.h"

namespace sample::record {

// The on=/off= relations of `specs` as the file stores them (kToggles),
// by spec index, which is the event's index in the file.
std::vector<format::ToggleEntry> ToggleEntries(const std::vector<EventSpec>& specs);

// The tracepoints' formats and filters as the file stores them
// (kTraceFormats), by spec index, so that the report names their payloads'
// fields on any host (tracefs formats change between kernels).
std::vector<format::TraceFormatEntry> TraceFormatEntries(const std::vector<EventSpec>& specs);

class EventOpener {
 public:
  // Builds the attributes (BuildEventAttrs, with this host's limits);
  // fails for settings we cannot record (yet). Opens nothing.
  static Result<EventOpener> Create(std::vector<EventSpec> specs, const SamplingDefaults& defaults,
                                    const RecordTarget& target);

  // Opens and maps everything. Threads that exit while we attach are
  // skipped (ESRCH) as long as one remains.
  Result<void> Open(const RecordTarget& target);

  std::vector<PerfEvent>& events() { return events_; }
  // Per CPU index: the index in events() of the event owning its buffer.
  const std::vector<size_t>& ring_owners() const { return ring_owners_; }
  // Names, attributes and ids of the events, for parsing what the ring
  // buffers hold.
  std::vector<EventDesc> Describe() const;
  // The same for the file: what the records are once the writer has
  // inserted their CPU (cpu_field()).
  std::vector<EventDesc> DescribeFile() const;
  // Where the CPU field goes when the events leave it out of the ring
  // buffers (each buffer is one CPU's); nullopt when the kernel writes it.
  const std::optional<CpuFieldPlace>& cpu_field() const { return cpu_field_; }
  const perf_event_attr& first_attr() const { return attrs_.front(); }
  const std::vector<EventSpec>& specs() const { return specs_; }
  // Every event's count so far with the time it was enabled and running,
  // summed over its fds (read before they close, for the file's kCounts).
  Result<format::Counts> ReadCounts(uint64_t elapsed_ns) const;
  // Turns on the sideband-tracking event, unless the exec does. For
  // delayed recordings: sampling stays off until EnableAll.
  Result<void> EnableTracking();
  // Turns on every event (those the exec turns on are left to it until
  // sampling is delayed past it).
  Result<void> EnableAll();
  // --control: turns the sampling events (or the one at `spec`) on or off;
  // the sideband's dummy stays on, group members follow their leader.
  Result<void> SetSampling(bool on, std::optional<size_t> spec);
  // The index of the sampling event named `name` (as -e gave it, the same
  // as in the file's event list) that SetSampling can switch: an error
  // for a name no event has and for a group member (its leader switches
  // it).
  Result<size_t> FindSwitchable(std::string_view name) const;
  // Data pages per ring buffer: -m, or as ChooseRingPages chose.
  size_t mmap_pages() const { return mmap_pages_; }
  // Every event's attr, as opened.
  const std::vector<perf_event_attr>& attrs() const { return attrs_; }
  // The sideband's own dummy event, when there is one.
  std::optional<size_t> tracking_dummy() const {
    return dummy_tracking_ ? std::optional<size_t>(tracking_) : std::nullopt;
  }
  // Per CPU and thread of the sideband: a dummy event whose small ring of
  // its own wakes the recorder at every COMM (an exec, above all), where
  // the sampling rings wake it only when half full or at its timers (up to
  // 100 ms later). A process that execs into a container's mount namespace
  // is then noted (its namespace pinned) while it lives, however briefly.
  // Their records are only woken for: the sideband's own copies go to the
  // file. Best effort: one that does not open is left out.
  std::vector<PerfEvent>& exec_wakers() { return exec_wakers_; }

 private:
  explicit EventOpener(EventAttrs built)
      : specs_(std::move(built.specs)),
        attrs_(std::move(built.attrs)),
        mmap_pages_(built.mmap_pages),
        cpu_field_(built.cpu_field),
        tracking_(built.tracking),
        dummy_tracking_(built.dummy_tracking),
        ids_(specs_.size()),
        every_cpu_(std::move(built.every_cpu)) {}
  Result<void> Enable(bool tracking_only);

  std::vector<EventSpec> specs_;
  std::vector<perf_event_attr> attrs_;
  size_t mmap_pages_;
  std::optional<CpuFieldPlace> cpu_field_;
  size_t tracking_;                         // the spec asked for the sideband
  bool dummy_tracking_;                     // tracking_ is the dummy added for it
  std::vector<std::vector<uint64_t>> ids_;  // per spec
  std::vector<PerfEvent> events_;
  std::vector<size_t> event_specs_;   // per event: its index in specs_
  std::vector<pid_t> event_threads_;  // per event: its thread (-1: the whole CPU)
  std::vector<size_t> ring_owners_;
  std::vector<bool> every_cpu_;  // per spec: OpenedOnEveryCpu
  std::vector<PerfEvent> exec_wakers_;
  // Opens the exec waker of (`pid`, `cpu`) (exec_wakers()), if it opens;
  // OpenExecWakers those of the sideband's events of the ring `owner` owns.
  void OpenExecWaker(pid_t pid, int cpu);
  void OpenExecWakers(size_t owner, int cpu);
};

}  // namespace sample::record
