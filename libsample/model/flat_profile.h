// The flat profile: a Profile's samples of one event, grouped by sort keys.
//
// BuildFlatProfile groups the samples a filter keeps into entries with self
// and children periods (period-weighted, as perf) and, on request, the call
// tree under each entry, then sorts entries and trees for stable output.
// Computing lives here; printing lives in the report's printers. The
// result holds function, comm and srcline ids: it is read together with the
// Profile it was built from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "libsample/model/profile.h"
#include "libsample/model/sample_filter.h"

namespace sample {

// What flat-profile entries are grouped by, as perf report's --sort keys
// (their names as typed are the reporter's syntax: report/views/sort_keys.h).
// kSym is the function symbol holding the address, as perf's rows: code
// inlined into it counts as its own. kInline is the innermost function at
// the address instead, an inlined call included (marked "(inlined)").
// kDsoDaddr and kSymbolDaddr are the sample's data address (-d): the
// mapping holding it, and the address itself (one row per address, as
// perf's symbol_daddr, named by the variable holding it when one does).
enum class SortKey {
  kComm,
  kPid,
  kTid,
  kDso,
  kSym,
  kCpu,
  kSrcline,
  kInline,
  kDsoDaddr,
  kSymbolDaddr,
  kCount  // how many keys there are
};

struct CallNode {
  uint32_t function = 0;
  uint64_t period = 0;
  uint64_t samples = 0;
  std::vector<CallNode> children;
};

// The direction of the call tree under an entry, as perf's -g caller/callee.
//   kCallee, no children: leaf -> its callers -> ... -> the outermost frame
//   kCaller, no children: the outermost frame -> ... -> the leaf
//   kCallee, children:    the entry -> its callers -> ... -> outermost
//   kCaller, children:    the entry -> its callees -> ... -> the leaves
enum class CallOrder {
  kCallee,  // perf's default without --children
  kCaller,  // perf's default with --children
};

struct FlatEntry {
  // The grouping values; fields not in the sort keys hold kAny.
  static constexpr uint32_t kAny = UINT32_MAX;
  // `function` is the row's function: the symbol holding the address
  // (SortKey::kSym) or the innermost inlined call (SortKey::kInline).
  uint32_t comm = kAny, pid = kAny, tid = kAny, cpu = kAny, dso = kAny, function = kAny,
           srcline = kAny;
  // The data address's DSO and location (Profile::data_location).
  uint32_t data_dso = kAny, data = kAny;
  uint64_t self_period = 0;
  uint64_t children_period = 0;
  uint64_t self_samples = 0;
  uint64_t children_samples = 0;
  // Counts of the event's group members (Profile::group_members order),
  // summed like self_period and children_period.
  std::vector<uint64_t> member_self;
  std::vector<uint64_t> member_children;
  // The root carries the entry's period (kAny function); its children start
  // the paths in the order of FlatOptions::order. Filled when requested.
  CallNode tree;
};

struct FlatOptions {
  uint32_t event = 0;  // only this event's samples
  // Only this thread's samples (a per-thread section); kAny: every thread.
  uint32_t tid = FlatEntry::kAny;
  std::vector<SortKey> sort_keys = {SortKey::kComm, SortKey::kDso, SortKey::kSym};
  bool children = false;  // also sum periods of samples where the entry is a caller
  bool call_graph = false;
  // Tree direction; unset: kCaller with children, kCallee without (as perf).
  std::optional<CallOrder> order;
  // Frames beyond this many (counted from the leaf) are ignored; 0 = all.
  size_t max_stack = 0;
  // Only samples this filter keeps are counted; null keeps all.
  const SampleFilter* filter = nullptr;
};

// The entries of one event and the totals of the samples they came from.
struct FlatProfile {
  std::vector<FlatEntry> entries;
  uint64_t samples = 0;                  // samples the filter kept
  uint64_t period = 0;                   // their summed period
  std::vector<uint64_t> member_periods;  // per group member
  // Frames of the kept samples' whole chains (each sampled or return
  // address once, its inlined calls not counted), and how many of them
  // nothing named.
  uint64_t frames = 0;
  uint64_t unknown_frames = 0;
};

// Entries sorted by children period (children mode) or self period, largest
// first; ties broken by name for stable output.
FlatProfile BuildFlatProfile(const Profile& profile, const FlatOptions& options);

// The order FlatOptions::order resolves to.
inline CallOrder EffectiveOrder(const FlatOptions& options) {
  return options.order.value_or(options.children ? CallOrder::kCaller : CallOrder::kCallee);
}

}  // namespace sample
