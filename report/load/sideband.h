// Sideband: the loader's handlers of the kernel's non-sample records, applied
// in time order between the samples: MMAP/MMAP2, COMM, FORK and EXIT change
// the process table; SWITCH records close the off-CPU intervals that the
// sched:sched_switch samples open (sample-record --off-cpu); THROTTLE and
// UNTHROTTLE time each CPU's throttled sampling; LOST and LOST_SAMPLES are
// counted. Well-formed records are kept for --script when LoadOptions asks.
//
// Owns the off-CPU pairing (OffCpuIntervals) and the open throttles; writes
// into the Recording being loaded (its stats, kept records and pseudo-event
// ids) and into the loader's samples, whose off-CPU weights are only known
// at the switch-in. The process table is the loader's: the sample path
// reads it too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "formats/recording_file.h"
#include "libsample/model/process_table.h"
#include "libsample/model/profile.h"
#include "report/load/off_cpu_intervals.h"
#include "report/load/ordered_records.h"
#include "report/load/recording.h"

namespace sample::report {

struct LoadOptions;

// Whether the recording can show off-CPU time: it has sched:sched_switch
// samples' event and context-switch records (sample-record --off-cpu).
bool HasOffCpuEvents(const std::vector<EventDesc>& events);
// The event whose period is time on the CPU (cpu-clock or task-clock, the
// first); nullopt when none.
std::optional<uint32_t> OnCpuClockEvent(const std::vector<EventDesc>& events);

class Sideband {
 public:
  // Called before a record changes `pid`'s mappings, so that samples still
  // waiting to be unwound resolve against the mappings of their moment.
  using BeforeMappingsChange = std::function<void(uint32_t pid)>;

  // Sets out.off_cpu_event when the recording is an off-CPU one.
  Sideband(const format::RecordingFile& reader, const LoadOptions& options, Recording& out,
           ProcessTable& processes, std::vector<ProfileSample>& samples,
           BeforeMappingsChange before_mappings_change);

  // Each returns false for a malformed record (the loader counts it).
  bool ApplyMmap(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplyComm(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplyFork(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplyExit(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplySwitch(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplyThrottle(std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplyLost(std::span<const std::byte> record, const perf_event_attr& attr);

  // Keeps a well-formed non-sample record for --script's sideband lines
  // (--show-switch-events, --show-all-records) when LoadOptions::sideband
  // asks for it.
  void KeepForScript(const TimedRecord& timed, uint32_t type);

  // A sample about to be added as samples[index]: a sched:sched_switch
  // sample of an off-CPU recording becomes an off-cpu sample, weighted
  // when its thread's switch-in is seen.
  void OnSample(ProfileSample& sample, size_t index);

  // After the last record: off-CPU samples whose thread never came back
  // are dropped (with --wall, the wall pseudo-event's samples are added),
  // and throttles never lifted count to `last_time`.
  void Finish(uint64_t last_time);

  std::optional<uint32_t> off_cpu_source() const { return off_cpu_source_; }

 private:
  void FinishOffCpu();
  void AddWallSamples();
  void CountLost(uint64_t lost, uint32_t cpu);

  const format::RecordingFile& reader_;
  const LoadOptions& options_;
  Recording& out_;
  ProcessTable& processes_;
  std::vector<ProfileSample>& samples_;
  BeforeMappingsChange before_mappings_change_;
  // Off-CPU recordings: the sched:sched_switch event whose samples become
  // the off-cpu pseudo-event's (out_.off_cpu_event), paired by intervals_.
  std::optional<uint32_t> off_cpu_source_;
  OffCpuIntervals intervals_;
  // Throttled events by (CPU, event id): since when.
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> throttled_since_;
};

}  // namespace sample::report
