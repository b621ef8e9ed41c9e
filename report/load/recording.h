// Recording: everything sample-report knows of one recording once it is
// loaded, the input of every view, printer and exporter: the symbolized
// Profile, the file's events and metadata, what went wrong while reading it
// (LoadStats, for --stats and the header's warnings), and what the kernel's
// records said beyond samples (off-CPU pseudo-events, toggle windows,
// sampling switches, kept sideband for --script). Made by LoadRecording
// (recording_loader.h); the views include only this header.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/recording_file.h"
#include "libsample/events/trace_format.h"
#include "libsample/model/profile.h"
#include "libsample/model/toggle_windows.h"
#include "libsample/perf/event_table.h"
#include "report/load/allocations.h"
#include "report/load/jit_timeline.h"
#include "report/load/off_cpu_intervals.h"
#include "report/load/stack_unwinding.h"

namespace sample::report {

// What the records said about one CPU.
struct CpuCounts {
  uint64_t samples = 0;
  uint64_t lost_samples = 0;  // PERF_RECORD_LOST and LOST_SAMPLES counts
  uint64_t lost_records = 0;  // how many such records
  // PERF_RECORD_THROTTLE: times the kernel stopped an event's sampling
  // (too many samples a tick), and for how long in all (to its UNTHROTTLE;
  // a throttle never lifted counts to the end of the recording).
  uint64_t throttles = 0;
  uint64_t throttled_ns = 0;
};

// An --alloc recording's calls as the loader paired them (AllocEvents).
struct AllocLoadStats {
  AllocStats pairs;
  uint64_t untracked = 0;  // posix_memalign: allocated, never tracked
  uint64_t untracked_bytes = 0;
  uint64_t malformed = 0;       // samples whose payload lacked the fields
  uint64_t outside_on = 0;      // calls and frees while probes were switched (left out)
  uint64_t scale = 1;           // -c N: every Nth allocation recorded, weighed N times
  LiveTimeline timeline;        // live bytes over time
  std::vector<uint64_t> calls;  // by event index: the samples of each alloc: event
};

struct LoadStats {
  std::array<uint64_t, 32> records_by_type{};  // indexed by PERF_RECORD_* (< 32)
  uint64_t records = 0;
  uint64_t malformed_records = 0;      // too short for their fields, bad sizes
  uint64_t malformed_samples = 0;      // of those, PERF_RECORD_SAMPLEs
  uint64_t saturated_periods = 0;      // samples whose period would overflow their event's sum
  uint64_t unknown_event_records = 0;  // id not in the event table
  uint64_t bad_chunks = 0;             // checksum or decompression failures
  uint64_t samples = 0;
  uint64_t lost_samples = 0;  // from PERF_RECORD_LOST and LOST_SAMPLES
  uint64_t frames = 0;
  uint64_t unknown_frames = 0;       // no mapping or no symbol
  // Locations whose inline chains were cut at kMaxInlineDepth frames
  // (libsample/symbols/address_frames.h).
  uint64_t cut_inline_chains = 0;
  uint64_t mismatched_binaries = 0;  // build-id differs from the recorded one
  uint64_t missing_binaries = 0;     // DSOs with samples whose file could not be read
  uint64_t unknown_group_reads = 0;  // group read values with an id of no known event
  // Call chains as deep as the kernel's limit (attr.sample_max_stack, else
  // kernel.perf_event_max_stack as recorded, 127 when not recorded): cut
  // there, their callers missing. chain_limit: the deepest such limit.
  uint64_t cut_chains = 0;
  uint32_t chain_limit = 0;
  // Samples whose chain ended at a caller in no code mapping (junk a
  // frame-pointer walk read; UnresolvedStacks).
  uint64_t junk_callers = 0;
  UnwindStats unwind;                // --call-graph dwarf and fp,leaf samples
  OffCpuStats off_cpu;               // switch-outs paired with switch-ins
  AllocLoadStats alloc;              // --alloc recordings
  JitDumpStats jitdump;              // the recording's jitdumps (kJitDump)
  uint64_t first_time = 0;
  uint64_t last_time = 0;
  // By the CPU field of the sample or of the record's sample_id trailer.
  std::map<uint32_t, CpuCounts> per_cpu;
  // Records of the file's format that are not kernel records (perf's own,
  // and what was skipped), by name.
  format::RecordCounts other_records;
  // Binary path -> where its symbols came from ("recorded path, DWARF",
  // "none: build-id differs", ...), sorted by path.
  format::Metadata symbol_sources;
};

// A recorded tracepoint's payload layout and kernel filter (kTraceFormats).
struct TracepointDesc {
  std::optional<TraceFormat> format;  // nullopt: not stored, or not parsable
  std::string filter;                 // --filter at record time; empty: none
};

// A non-sample record kept for --script (--show-switch-events,
// --show-all-records): its bytes, the event whose attributes parse it, and
// the thread's command name at that moment.
struct KeptRecord {
  uint64_t time = 0;
  uint32_t event = 0;
  std::string comm;
  std::vector<std::byte> bytes;
};

// Which non-sample records LoadRecording keeps (Recording::sideband).
enum class KeepSideband { kNone, kSwitches, kAll };

struct Recording {
  Profile profile;
  LoadStats stats;
  format::Metadata metadata;
  format::Metadata build_ids;  // binary path -> build-id, as recorded
  std::vector<EventDesc> events;
  // Some event was recorded with call chains (PERF_SAMPLE_CALLCHAIN, which
  // -g and --call-graph dwarf set, or a user stack copy to unwind). Decides
  // the default children mode and --script's layout; a leaf expanded into
  // inlined calls does not count, it is still one sampled address.
  bool callchains = false;
  // Some event was recorded with data addresses (PERF_SAMPLE_ADDR: -d, or
  // perf record -d): samples' `data` fields say where they were, for the
  // dso_daddr and symbol_daddr sort keys.
  bool data_addresses = false;
  // Pseudo-events the loader adds after the file's events (ids past
  // events.size()): "off-cpu", whose samples are the sched:sched_switch
  // samples of an off-CPU recording weighted by the ns each thread stayed
  // blocked; "off-cpu-preempted" (off_cpu_event + 1), the same for threads
  // switched out while runnable (waiting for a CPU); and with
  // LoadOptions::wall "wall", both plus the on-CPU samples of a cpu-clock
  // or task-clock event (weighted by their period, ns too). Their periods
  // are times.
  std::optional<uint32_t> off_cpu_event;
  std::optional<uint32_t> wall_event;
  // An --alloc recording's pseudo-events, from this id on, before the
  // off-CPU ones: "alloc-bytes", "alloc-calls" (+1), "leak-bytes" (+2),
  // "peak-bytes" (+3) (report/load/alloc_events.h). Their periods are
  // bytes, alloc-calls' 1.
  std::optional<uint32_t> alloc_event;
  // The file's sched:sched_switch event whose samples became off_cpu_event's.
  std::optional<uint32_t> off_cpu_source;
  // LoadOptions::sideband's records, in time order.
  std::vector<KeptRecord> sideband;
  std::optional<format::Trailer> trailer;  // present when finalized
  std::optional<format::Counts> counts;    // the counters' totals, when stored
  // Toggle events: which events switch which (empty without), and per
  // event index the windows and the samples inside and outside them.
  std::vector<ToggleRelation> toggles;
  std::vector<ToggleStats> toggle_stats;
  bool toggles_applied = false;  // samples outside the windows were left out
  // When sampling was switched on and off (-D, --control); empty when it
  // was on throughout.
  std::vector<format::ControlEntry> control;
  // By event index: empty when the file stores no trace formats, else one
  // per event (those that are no tracepoint have neither format nor filter).
  std::vector<TracepointDesc> tracepoints;
  // The JIT code of the recording's jitdumps by pseudo-DSO path
  // ("[jitted-PID]"): a frame's (DSO, offset) there is in the function
  // JitCode::FunctionAt gives, whose code bytes it holds for the annotate
  // view.
  std::map<std::string, std::shared_ptr<const JitCode>> jit_code;
  // What the file embedded of its binaries (shared with the reader's): the
  // annotate view reads a missing binary's code there.
  EmbeddedBinaries embedded;
  bool finalized = false;
  std::string format_name;  // "sample.data", "perf.data", ...
  uint64_t file_size = 0;
  uint64_t valid_end = 0;  // bytes read before a torn end (== file_size if none)
  std::vector<std::string> warnings;
};

// The unit of an event's periods: nanoseconds for the off-CPU and wall
// pseudo-events, bytes for --alloc's alloc-bytes, leak-bytes and
// peak-bytes, else counts (of events, or alloc-calls' calls).
enum class PeriodUnit { kCount, kNanoseconds, kBytes };

inline PeriodUnit EventPeriodUnit(const Recording& recording, uint32_t event) {
  const auto& off_cpu = recording.off_cpu_event;
  if ((off_cpu && (event == *off_cpu || event == *off_cpu + 1)) || event == recording.wall_event) {
    return PeriodUnit::kNanoseconds;
  }
  const auto& alloc = recording.alloc_event;
  if (alloc && event >= *alloc && event <= *alloc + 3 && event != *alloc + 1) {
    return PeriodUnit::kBytes;
  }
  return PeriodUnit::kCount;
}

// Whether a sample of `event` weighs its period in every view and export,
// whatever they weigh others by: time and bytes, and alloc-calls (a
// recorded call stands for N with -c N).
inline bool WeighedByPeriod(const Recording& recording, uint32_t event) {
  const auto& alloc = recording.alloc_event;
  return EventPeriodUnit(recording, event) != PeriodUnit::kCount || (alloc && event == *alloc + 1);
}

}  // namespace sample::report
