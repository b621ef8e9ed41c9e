// Loader: the state and steps of loading one recording, shared by
// LoadRecording (recording_loader.cc: Run, the records read and dispatched)
// and LiveLoader (live_loader.cc: Next, the state kept from call to call).
// Internal to report/load: views see LoadRecording and LiveLoader only
// (recording_loader.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "formats/recording_file.h"
#include "libsample/model/process_table.h"
#include "libsample/model/toggle_windows.h"
#include "libsample/perf/perf_record.h"
#include "report/load/alloc_events.h"
#include "report/load/comm_ids.h"
#include "report/load/data_addresses.h"
#include "report/load/group_reads.h"
#include "report/load/jit_timeline.h"
#include "report/load/location_naming.h"
#include "report/load/ordered_records.h"
#include "report/load/profile_building.h"
#include "report/load/recording.h"
#include "report/load/recording_loader.h"
#include "report/load/sample_merging.h"
#include "report/load/sideband.h"
#include "report/load/stack_unwinding.h"
#include "report/load/unresolved_stacks.h"

namespace sample::report {

// Records the file's chunks claim to hold: a reservation hint for the
// samples (which are most records), so the sample vector is allocated once
// instead of doubling through the load.
size_t ExpectedRecords(const format::RecordingFile& reader);

// Loads one recording: records are read in time order and dispatched by
// type, samples to ApplySample (unresolved stacks, unwound where they need
// it), the rest to the Sideband's handlers; then LocationNaming names every
// distinct location once and profile_building.h turns the samples into the
// Profile's function stacks. Each stage owns its state; the Loader holds
// the stages and the samples passing between them.
class Loader {
 public:
  Loader(const format::RecordingFile& reader, const LoadOptions& options);
  Result<Recording> Run();
  // LiveLoader's: applies the chunks the reader now holds to the state
  // kept from the calls before, and makes the Recording of their samples.
  const Recording& Next();
  size_t named_locations() const { return naming_.named(); }

 private:
  void ReadRecords(unsigned jobs);
  // ReadRecords' three parts: the state reading needs, the records of the
  // reader's chunks in time order, and what is said once they are all read.
  void StartReading(unsigned jobs);
  void ApplyChunks(unsigned jobs);
  void FinishReading();
  // Dispatches a record by type; each handler returns false for a
  // malformed record, which Apply counts.
  void Apply(const TimedRecord& record);
  bool ApplySideband(uint32_t type, std::span<const std::byte> record, const perf_event_attr& attr);
  bool ApplySample(std::span<const std::byte> record, const perf_event_attr& attr, uint32_t event);
  // Whether a sample's kernel chain is as deep as the kernel's limit (cut
  // there, its callers missing); counted in the stats.
  bool ChainWasCut(const SampleRecord& sample, const perf_event_attr& attr);
  // Before a record changes `pid`'s mappings: the unwound frames of its
  // queued samples are resolved against the process table when the
  // unwinder calls back, so they must be before the change.
  void BeforeMappingsChange(uint32_t pid);
  void FlushUnwinding();
  // Frees the indexes only loading uses and returns freed heap to the system.
  void ReleaseLoadingState();

  const format::RecordingFile& reader_;
  const LoadOptions& options_;
  // The recording's own code (its vDSO image, embedded binaries), handed
  // to every stage's locator.
  const RecordedCode recorded_;
  Recording out_;
  ProcessTable processes_;
  std::optional<StackUnwinding> unwinding_;
  // The jitdumps' code loads and moves, applied among the records.
  std::optional<JitTimeline> jit_;
  // Samples' frames refer to stacks_ until symbolization turns them into
  // functions.
  UnresolvedStacks stacks_;
  std::vector<ProfileSample> samples_;
  std::vector<MemberCount> sample_reads_;
  GroupReadDeltas group_reads_;
  ToggleWindows toggles_;
  Sideband sideband_;
  std::optional<AllocEvents> alloc_;  // --alloc recordings
  DataAddresses data_;                // -d recordings' data addresses
  uint32_t host_max_stack_ = 127;  // kernel.perf_event_max_stack when recorded
  LocationNaming naming_;
  // Payload buffers from one ApplyChunks to the next.
  std::vector<format::Payload> payload_pool_;
  uint64_t live_calls_ = 0;
  CommIds comm_ids_;  // each sample's thread's name in the profile
  // The last sample's CPU's counts (std::map nodes stay where they are).
  uint32_t last_cpu_ = 0;
  CpuCounts* last_cpu_counts_ = nullptr;
  // LoadOptions::merge_samples, unless samples are paired by their place
  // (and --annotate's memo of recent samples).
  SampleMerging merging_;
  static constexpr uint64_t kCacheClearCalls = 60;
};

}  // namespace sample::report
