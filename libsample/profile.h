// Profile: symbolized samples, and the aggregations the views print.
//
// A Profile holds every sample as a small header referring to its stack of
// function ids (leaf first), each distinct stack stored once; functions, command names and DSO
// names are interned once. BuildFlatProfile groups samples by sort keys into
// entries with self and children periods (period-weighted, as perf) and,
// on request, the call tree under each entry. Computing lives here; printing
// lives in the report's printers.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libsample/result.h"
#include "libsample/sequence_interner.h"

namespace sample {

struct Function {
  uint32_t dso = 0;
  std::string name;
  bool kernel = false;
  bool known = true;  // false: "[unknown]" placeholder named by address
};

struct ProfileSample {
  uint32_t event = 0;  // index into the recording's events
  uint32_t comm = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  uint32_t frames_begin = 0;
  uint32_t frames_count = 0;
};

class Profile {
 public:
  uint32_t InternComm(std::string_view comm);
  uint32_t InternFunction(uint32_t dso, std::string_view name, bool kernel, bool known);
  // `frames` are function ids, leaf first; at least one.
  void AddSample(ProfileSample sample, std::span<const uint32_t> frames);

  void set_dso_names(std::vector<std::string> names) { dso_names_ = std::move(names); }
  void set_event_names(std::vector<std::string> names);

  const std::vector<ProfileSample>& samples() const { return samples_; }
  std::span<const uint32_t> frames(const ProfileSample& s) const {
    return stacks_.Get({s.frames_begin, s.frames_count});
  }
  const Function& function(uint32_t id) const { return functions_[id]; }
  const std::string& comm(uint32_t id) const { return comms_[id]; }
  const std::string& dso_name(uint32_t id) const { return dso_names_[id]; }
  size_t event_count() const { return event_names_.size(); }
  const std::string& event_name(uint32_t event) const { return event_names_[event]; }
  // Sums over the samples of one event (periods of different events are
  // in different units and never added together).
  uint64_t total_period(uint32_t event) const {
    return event < totals_.size() ? totals_[event].period : 0;
  }
  uint64_t sample_count(uint32_t event) const {
    return event < totals_.size() ? totals_[event].samples : 0;
  }
  bool has_callchains() const { return has_callchains_; }

 private:
  std::vector<ProfileSample> samples_;
  SequenceInterner stacks_;  // each distinct stack once; samples refer to it
  std::vector<Function> functions_;
  std::unordered_map<std::string, uint32_t> function_ids_;  // key: dso + '\0' + name
  std::vector<std::string> comms_;
  std::unordered_map<std::string, uint32_t> comm_ids_;
  std::vector<std::string> dso_names_;
  struct Totals {
    uint64_t period = 0;
    uint64_t samples = 0;
  };
  std::vector<std::string> event_names_;
  std::vector<Totals> totals_;
  bool has_callchains_ = false;
};

enum class SortKey { kComm, kPid, kTid, kDso, kSym, kCpu };

// "comm,dso,sym" -> keys; errors name the unknown key and list valid ones.
Result<std::vector<SortKey>> ParseSortKeys(std::string_view text);

struct CallNode {
  uint32_t function = 0;
  uint64_t period = 0;
  uint64_t samples = 0;
  std::vector<CallNode> children;
};

enum class CallOrder {
  kCallee,  // from the entry towards its callers (perf --no-children default)
  kCaller,  // from the entry towards its callees (perf --children default)
};

struct FlatEntry {
  // The grouping values; fields not in the sort keys hold kAny.
  static constexpr uint32_t kAny = UINT32_MAX;
  uint32_t comm = kAny, pid = kAny, tid = kAny, cpu = kAny, dso = kAny, function = kAny;
  uint64_t self_period = 0;
  uint64_t children_period = 0;
  uint64_t self_samples = 0;
  uint64_t children_samples = 0;
  CallNode tree;  // root is the entry's function; filled when requested
};

struct FlatOptions {
  uint32_t event = 0;  // only this event's samples
  std::vector<SortKey> sort_keys = {SortKey::kComm, SortKey::kDso, SortKey::kSym};
  bool children = false;  // also sum periods of samples where the entry is a caller
  bool call_graph = false;
};

// Entries sorted by children period (children mode) or self period, largest
// first; ties broken by name for stable output.
std::vector<FlatEntry> BuildFlatProfile(const Profile& profile, const FlatOptions& options);

}  // namespace sample
