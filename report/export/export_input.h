// ExportInput: the samples an export draws, kept by the same filters as the
// text views (--comm, --pid, --tid, --dso, --symbols, --cpu, --time), with
// their stacks cut by the same --max-stack and named by the same symbols
// (inlined calls are frames of their own). One section per event with
// samples, or the one --event names; formats that draw one profile take
// the first section and say so when there were more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "libsample/model/profile.h"
#include "libsample/model/sample_filter.h"
#include "libsample/model/stack_tree.h"
#include "libsample/result.h"
#include "libsample/symbols/recorded_binary.h"
#include "report/load/recording.h"

namespace sample::report {

// What a frame's width (folded count, flame-graph width) measures.
enum class ExportWeight { kSamples, kPeriod };

struct ExportOptions {
  std::string event;  // --event: only this event; empty: every event with samples
  ExportWeight weight = ExportWeight::kSamples;  // --folded-weight
  bool icicle = false;                           // --icicle: flame graphs drawn top-down
  size_t max_stack = 0;                          // --max-stack; 0: whole chains
};

struct ExportSection {
  uint32_t event = 0;
  std::string name;               // the event's name
  std::vector<uint32_t> samples;  // indexes into Profile::samples() of the kept samples, in order
  uint64_t period = 0;            // of the kept samples
  uint64_t sample_count = 0;      // the kept samples (an entry may stand for several)
};

// How a frame is drawn (its colour in a flame graph).
enum class FrameKind { kUser, kKernel, kJit, kInlined, kUnknown };
std::string_view FrameKindName(FrameKind kind);  // "user", "kernel", "jit", "inlined", "unknown"

struct ExportInput {
  const Recording* recording = nullptr;
  ExportOptions options;
  std::vector<ExportSection> sections;  // at least one
  std::string command_line;             // as recorded ("" when the file does not say)
  // --diff BASE: the baseline's input, for differential flame graphs
  // (report/diff/flame_diff.h); null otherwise.
  const ExportInput* baseline = nullptr;
  // The filter that kept the samples, and how the report finds binaries
  // (LoadOptions::binaries; null: the export reads none): what the HTML
  // page's annotation (BuildAnnotateView) needs beside the recording.
  SampleFilter filter;
  const BinaryLocatorOptions* binaries = nullptr;

  const Profile& profile() const { return recording->profile; }
  const ProfileSample& sample(uint32_t index) const { return profile().samples()[index]; }
  // A sample's function ids, leaf first, cut to --max-stack.
  std::span<const uint32_t> Frames(const ProfileSample& sample) const;
  // Parallel to Frames(sample).
  std::span<const FrameAddress> Addresses(const ProfileSample& sample) const;
  // The off-CPU and wall pseudo-events, whose periods are ns, and --alloc's:
  // one sample is an interval, a block of any size or N calls, so they are
  // always weighted by period.
  bool PeriodWeighted(uint32_t event) const { return WeighedByPeriod(*recording, event); }
  // 1, or the sample's period, as options.weight says (period for time).
  uint64_t Weight(const ProfileSample& sample) const {
    return options.weight == ExportWeight::kPeriod || PeriodWeighted(sample.event) ? sample.period
                                                                                   : sample.samples;
  }
  FrameKind Kind(uint32_t function) const;
};

// `section`'s kept samples merged from the root (StackTree), frames cut to
// --max-stack, one command node first per comm when `by_comm`, children
// sorted by name. Samples with the same command and interned stack walk
// their path once: per sample, a million samples cost seconds of hash-table
// misses.
StackTree BuildStackTree(const ExportInput& input, const ExportSection& section, bool by_comm);

// `single`: the format draws one profile (folded, svg): only the first
// section is kept, with a warning in `warnings` naming the others and
// --event. Error: --event names no event of the recording.
Result<ExportInput> BuildExportInput(const Recording& recording, const SampleFilter& filter,
                                     const ExportOptions& options, bool single,
                                     std::vector<std::string>& warnings);

}  // namespace sample::report
