// ProfileDiff: two recordings' flat profiles compared function by function,
// as perf diff does: per event (matched by name), each function's share of
// the kept period in the baseline and in the new recording, and the delta
// (new share - baseline share, in percentage points). Functions are matched
// by the basename of their DSO and their name (inlined calls by their
// label), so a rebuilt binary at another path still matches. Both sides go
// through the same flat-profile builder as the text report, each with its
// own SampleFilter made from the same options, and the same --max-stack.
//
// Plain data: it holds names, not ids, since its entries come from two
// Profiles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "libsample/model/profile.h"
#include "libsample/model/sample_filter.h"
#include "libsample/result.h"

namespace sample::report {

// One function on one side of the comparison.
struct DiffSide {
  bool present = false;  // the function has a share on this side
  uint64_t samples = 0;
  uint64_t period = 0;
  double share = 0;  // percent of the side's kept period
};

struct DiffEntry {
  std::string dso;     // basename
  std::string symbol;  // FunctionLabel
  // With DiffOptions::data_object: the basename of the mapping the samples'
  // data addresses were in (-d recordings); empty otherwise.
  std::string data_object;
  bool kernel = false;
  DiffSide before;  // the baseline
  DiffSide after;   // the new recording
  // after.share - before.share; -before.share for a function gone from the
  // new recording (perf prints no delta for those).
  double delta = 0;
};

// The kept samples of one side of an event.
struct DiffTotals {
  uint64_t samples = 0;
  uint64_t period = 0;
};

struct DiffSection {
  std::string event;
  bool data_object = false;  // rows by data object too (DiffOptions::data_object)
  DiffTotals before, after;
  // As perf diff sorts them: the functions of the new recording by the size
  // of their change (|delta|, largest first), then those only in the
  // baseline by their baseline share; ties by DSO and name.
  std::vector<DiffEntry> entries;
};

struct DiffOptions {
  std::string event;      // --event: only this event; empty: every shared event
  bool children = false;  // shares with callees' time added (--children)
  size_t max_stack = 0;   // 0: whole chains
  // Rows by the data addresses' mapping too (--sort names dso_daddr).
  bool data_object = false;
};

// One side's input: its profile and the filter made for it (time windows
// are relative to each recording's first sample).
struct DiffInput {
  const Profile* profile = nullptr;
  const SampleFilter* filter = nullptr;
};

// The events that have samples in the baseline (in its order) and exist in
// the new recording, each compared; events on one side only are named in
// `warnings`. Errors: --event names an event one side lacks, or no event
// is in both.
Result<std::vector<DiffSection>> DiffProfiles(const DiffInput& before, const DiffInput& after,
                                              const DiffOptions& options,
                                              std::vector<std::string>& warnings);

// The event pairs DiffProfiles compares: (baseline event, new event).
struct EventPair {
  uint32_t before = 0;
  uint32_t after = 0;
  std::string name;
};
Result<std::vector<EventPair>> MatchEvents(const Profile& before, const Profile& after,
                                           const std::string& event,
                                           std::vector<std::string>& warnings);

}  // namespace sample::report
