// SampleFilter: which samples a report counts, as perf report's --comm,
// --pid, --tid, --cpu, --dso, --symbols and --time.
//
// Each given list must contain the sample's value; lists left empty keep
// everything. --dso and --symbols look at the sample's own (leaf) address: a
// DSO matches by full path or by file name, a symbol by its name (the
// function holding the address or one of its inlined calls there; a C++
// function by its name with or without its parameter list). Time
// ranges are absolute (perf clock, ns); see time_range.h for the option
// syntax. Holds copies of the lists; no reference to a Profile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libsample/model/profile.h"
#include "libsample/model/time_range.h"

namespace sample {

struct SampleFilterOptions {
  std::vector<std::string> comms;
  std::vector<uint32_t> pids;
  std::vector<uint32_t> tids;
  std::vector<int> cpus;
  std::vector<std::string> dsos;
  std::vector<std::string> symbols;
  std::vector<TimeRange> times;  // a sample in any range is kept
  bool time_given = false;       // times applies even when empty (keeps nothing)
};

// The filter options as typed values, read once from a command line before
// any recording is known: the lists as SampleFilter keeps them, and --time
// still relative to a recording's first and last sample. One spec makes the
// filter of each recording it is applied to (sample-report --diff has two).
struct SampleFilterSpec {
  SampleFilterOptions lists;     // every list but `times`, which `time` gives
  std::optional<TimeSpec> time;  // unset: no --time
};

class SampleFilter {
 public:
  SampleFilter() = default;  // keeps every sample
  explicit SampleFilter(SampleFilterOptions options) : options_(std::move(options)) {}
  // `spec` applied to `profile`: its time ranges made absolute.
  SampleFilter(const SampleFilterSpec& spec, const Profile& profile);

  bool Keeps(const Profile& profile, const ProfileSample& sample) const;
  // True when no option narrows anything.
  bool empty() const;

 private:
  SampleFilterOptions options_;
};

}  // namespace sample
