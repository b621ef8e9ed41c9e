// HeaderView: what the file says about its recording, for --header,
// --header-only and --stats: the host and command line, the events and their
// attributes, sample and lost counts (per CPU), build-ids, and whether the
// file was finalized or recovered from a recorder that died. Computed from
// a Recording; printers only format it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libsample/perf/chain_capture.h"
#include "libsample/perf/perf_names.h"
#include "report/load/recording.h"

namespace sample::report {

struct EventInfo {
  std::string name;
  uint32_t type = 0;
  std::string type_name;  // "software", "hardware", ... or "pmu N"
  uint64_t config = 0;
  bool freq = false;
  uint64_t period_or_freq = 0;  // sample_freq when freq, else sample_period
  uint64_t sample_type = 0;
  std::string sample_type_names;  // "IDENTIFIER|IP|TID|..."
  uint64_t read_format = 0;
  std::string read_format_names;
  // How call chains were recorded, and the attrs that say so.
  ChainCaptureOptions chain_capture;
  uint64_t sample_regs_user = 0;
  bool exclude_callchain_user = false;
  bool exclude_user = false;
  bool exclude_kernel = false;
  bool inherit = false;
  // Every other field the recorder set (non-zero; clockid whenever
  // use_clockid is), in the struct's order: flags such as disabled,
  // exclude_hv, precise_ip, use_clockid, context_switch, and values such as
  // clockid, wakeup_events, sample_max_stack.
  std::vector<AttrField> attr_fields;
  size_t ids = 0;                          // file descriptors opened for it (CPUs x threads)
  std::vector<std::string> group_members;  // read with this event's samples
  uint64_t samples = 0;
  // Tracepoints: the --filter the kernel applied (empty: none) and the
  // payload's field names from the stored format (common_* left out).
  bool tracepoint = false;
  std::string filter;
  std::vector<std::string> trace_fields;
};

// One counter's totals (the file's kCounts chunk).
struct CountInfo {
  std::string name;
  bool supported = true;
  uint64_t count = 0;
  uint64_t time_enabled = 0, time_running = 0;  // ns
  // count * enabled / running when the counter did not run all the time
  // it was enabled (the kernel multiplexed it); nullopt when it ran all of
  // it or never ran.
  std::optional<double> scaled;
  double running_pct = 0;  // of the time enabled; 0 when never enabled
  size_t intervals = 0;    // -I intervals stored
};

struct CountsInfo {
  bool from_counting = true;  // sample-record --stat, else a sampling recording's end
  double elapsed_s = 0;
  std::vector<CountInfo> events;
  size_t multiplexed = 0;  // events that ran less than they were enabled
};

// A toggled event (on=/off= triggers) and what its windows kept.
struct ToggleInfo {
  std::string name;
  std::vector<std::string> on_by, off_by;  // the triggers' names
  bool per_cpu = false;
  bool starts_on = false;
  uint64_t windows = 0;
  uint64_t inside = 0, outside = 0;  // samples
  uint64_t unmatched_off = 0;
  bool applied = true;  // samples outside were left out (not --no-toggle)
};

// When sampling was on (-D, --control): the enabled periods (the text's
// "window" lines), relative to the recording's start.
struct ControlInfo {
  struct Period {
    double start_s = 0, end_s = 0;
    std::vector<std::string> events;  // on in it; empty: every sampling event throughout
  };
  std::vector<Period> periods;
  double enabled_s = 0;
  double total_s = 0;  // of the recording
};

struct HeaderView {
  // Recorded host facts; empty when the file does not say.
  std::string hostname, os_release, os_version, arch, cpus_online, cmdline, recorder_version;
  // The file's format ("sample.data", "perf.data", ...), and where kernel
  // symbols came from when the file did not carry them (perf.data).
  std::string format, kernel_symbols;
  std::optional<uint64_t> start_realtime_ns;
  std::string start_time;  // start_realtime_ns as "YYYY-MM-DD HH:MM:SS UTC"
  double duration_s = 0;   // first to last record (the trailer's when finalized)
  std::vector<EventInfo> events;
  uint64_t samples = 0;
  uint64_t lost_samples = 0;
  std::map<uint32_t, CpuCounts> per_cpu;
  std::vector<std::pair<std::string, std::string>> build_ids;  // path, build-id
  // JIT code named from the recording's jitdumps, by pseudo-DSO.
  struct JitDumpInfo {
    std::string dso;  // "[jitted-PID]"
    uint64_t functions = 0;
    uint64_t moves = 0;
  };
  std::vector<JitDumpInfo> jit_dumps;
  bool finalized = false;
  uint64_t file_size = 0;
  uint64_t valid_end = 0;
  std::vector<ToggleInfo> toggles;     // toggled events, in event order
  std::optional<CountsInfo> counts;    // the counters' totals, when the file has them
  std::optional<ControlInfo> control;  // when the file has switches
};

HeaderView BuildHeaderView(const Recording& recording);

// The view of a kCounts chunk.
CountsInfo BuildCountsInfo(const format::Counts& counts);

}  // namespace sample::report
