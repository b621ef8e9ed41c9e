// ScriptView: the samples --script prints, one entry per sample in time
// order (as perf script), each with its frames leaf first. Built from the
// Profile with the report's filters and --max-stack; refers into the
// Recording, which must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libsample/events/trace_format.h"
#include "libsample/model/profile.h"
#include "libsample/model/sample_filter.h"
#include "report/load/recording.h"

namespace sample::report {

struct ScriptFrame {
  uint64_t ip = 0;
  const Function* function = nullptr;
  uint64_t symbol_offset = FrameAddress::kNoOffset;
  const std::string* dso = nullptr;  // the DSO's path, "[kernel.kallsyms]", ...
};

// Sampling switched on or off (-D, --control: the file's kControl).
struct ScriptSwitch {
  uint64_t time = 0;
  bool on = false;
  std::string event;  // empty: every sampling event
};

// A non-sample record as --script prints it, perf script's way:
// "PERF_RECORD_SWITCH OUT preempt", "PERF_RECORD_COMM exec: ls:42/42", ...
struct ScriptSideband {
  uint64_t time = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  const std::string* comm = nullptr;
  std::string text;
};

struct ScriptView {
  const Profile* profile = nullptr;
  std::vector<const ProfileSample*> samples;
  std::vector<ScriptSwitch> switches;  // in time order
  size_t max_stack = 0;                // 0: every frame
  bool callchains = false;             // the recording has call chains: one frame a line
  // Recording::sideband described, in time order; printed between the
  // samples by time (ties: the record first). Filters do not apply.
  std::vector<ScriptSideband> sideband;

  // By event index, the recording's (may be empty: no tracepoints).
  const std::vector<TracepointDesc>* tracepoints = nullptr;

  std::vector<ScriptFrame> Frames(const ProfileSample& sample) const;
  // A tracepoint sample's payload decoded by its recorded format (see
  // libsample/events/trace_format.h for how values are shown); empty for
  // other samples, and for tracepoints whose format was not stored.
  std::vector<TraceValue> TraceFields(const ProfileSample& sample) const;
};

// One kept record in perf script's words (the text after the time); the
// strings in it (commands, paths) have control characters replaced.
std::string DescribeRecord(std::span<const std::byte> record, const perf_event_attr& attr);

ScriptView BuildScriptView(const Recording& recording, const SampleFilter& filter,
                           size_t max_stack);

}  // namespace sample::report
