#include "report/diff/profile_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "libsample/model/flat_profile.h"
#include "libsample/percent.h"
#include "libsample/string_parts.h"

namespace sample::report {
namespace {

// Index of the first event called `name`, or -1.
int64_t FindEvent(const Profile& profile, const std::string& name) {
  for (uint32_t e = 0; e < profile.event_count(); ++e) {
    if (profile.event_name(e) == name) return e;
  }
  return -1;
}

// The events the text report gives a section: those with samples (every
// event when none has any).
std::vector<uint32_t> SampledEvents(const Profile& profile) {
  std::vector<uint32_t> with, all;
  for (uint32_t e = 0; e < profile.event_count(); ++e) {
    all.push_back(e);
    if (profile.sample_count(e) != 0) with.push_back(e);
  }
  return with.empty() ? all : with;
}

// The leader whose samples carry `event`'s counts, or -1 when `event`
// samples on its own (or has samples).
int64_t LeaderOf(const Profile& profile, uint32_t event) {
  if (profile.sample_count(event) != 0) return -1;
  for (uint32_t leader = 0; leader < profile.event_count(); ++leader) {
    const std::vector<uint32_t>& members = profile.group_members(leader);
    if (std::find(members.begin(), members.end(), event) != members.end()) return leader;
  }
  return -1;
}

// (data object basename or empty, dso basename, label by the full
// signature): a C++ overload's name as printed depends on the other
// overloads its recording has (see Profile::ChooseNames), its signature
// does not.
using FunctionKey = std::tuple<std::string, std::string, std::string>;

// One side of one event: its flat profile (dso,sym entries, with the kept
// samples' totals), each entry's key and its label as printed.
struct SideProfile {
  FlatProfile flat;
  std::vector<FunctionKey> keys;    // parallel to flat.entries
  std::vector<std::string> labels;  // parallel to flat.entries
};

SideProfile Side(const DiffInput& input, uint32_t event, const DiffOptions& options) {
  FlatOptions flat;
  flat.event = event;
  flat.sort_keys = {SortKey::kDso, SortKey::kSym};
  if (options.data_object) flat.sort_keys.insert(flat.sort_keys.begin(), SortKey::kDsoDaddr);
  flat.children = options.children;
  flat.max_stack = options.max_stack;
  flat.filter = input.filter == nullptr || input.filter->empty() ? nullptr : input.filter;
  SideProfile side{BuildFlatProfile(*input.profile, flat), {}};
  for (const FlatEntry& e : side.flat.entries) {
    const Function& f = input.profile->function(e.function);
    Function full = f;
    if (!f.signature.empty()) full.name = f.signature;
    side.keys.emplace_back(
        options.data_object ? Basename(input.profile->dso_name(e.data_dso)) : std::string(),
        Basename(input.profile->dso_name(e.dso)), FunctionLabel(full));
    side.labels.push_back(FunctionLabel(f));
  }
  return side;
}

// Adds flat-profile entry `e` to `side`: two entries can share a key (DSOs
// of the same basename at different paths), and they are one function.
void AddTo(DiffSide& side, const FlatEntry& e, bool children) {
  side.period += children ? e.children_period : e.self_period;
  side.samples += children ? e.children_samples : e.self_samples;
  side.present = side.period != 0 || side.samples != 0;
}

// perf diff's order: what the new recording has, by the size of the change;
// then what only the baseline has, by its share.
bool ComesFirst(const DiffEntry& a, const DiffEntry& b) {
  if (a.after.present != b.after.present) return a.after.present;
  const double ka = a.after.present ? std::fabs(a.delta) : a.before.share;
  const double kb = b.after.present ? std::fabs(b.delta) : b.before.share;
  if (ka != kb) return ka > kb;
  if (a.before.share != b.before.share) return a.before.share > b.before.share;
  return std::tie(a.data_object, a.dso, a.symbol) < std::tie(b.data_object, b.dso, b.symbol);
}

DiffSection Compare(const DiffInput& before, const DiffInput& after, const EventPair& pair,
                    const DiffOptions& options) {
  const SideProfile base = Side(before, pair.before, options);
  const SideProfile next = Side(after, pair.after, options);
  DiffSection section;
  section.event = pair.name;
  section.data_object = options.data_object;
  section.before = {base.flat.samples, base.flat.period};
  section.after = {next.flat.samples, next.flat.period};
  std::map<FunctionKey, size_t> index;
  auto entry_for = [&](const FunctionKey& key, const std::string& label,
                       bool kernel) -> DiffEntry& {
    auto [it, inserted] = index.try_emplace(key, section.entries.size());
    if (inserted) {
      DiffEntry entry;
      entry.dso = std::get<1>(key);
      entry.symbol = label;
      entry.data_object = std::get<0>(key);
      entry.kernel = kernel;
      section.entries.push_back(std::move(entry));
    }
    DiffEntry& entry = section.entries[it->second];
    // An overload one side had to name by its signature: so does the row.
    if (label.size() > entry.symbol.size()) entry.symbol = label;
    return entry;
  };
  auto add_side = [&](const SideProfile& side, const Profile& profile, bool baseline) {
    for (size_t i = 0; i < side.flat.entries.size(); ++i) {
      const FlatEntry& e = side.flat.entries[i];
      if ((options.children ? e.children_period : e.self_period) == 0) continue;
      DiffEntry& entry =
          entry_for(side.keys[i], side.labels[i], profile.function(e.function).kernel);
      AddTo(baseline ? entry.before : entry.after, e, options.children);
    }
  };
  add_side(base, *before.profile, true);
  add_side(next, *after.profile, false);
  for (DiffEntry& e : section.entries) {
    e.before.share = Percentage(e.before.period, base.flat.period);
    e.after.share = Percentage(e.after.period, next.flat.period);
    e.delta = e.after.share - e.before.share;
  }
  std::sort(section.entries.begin(), section.entries.end(), ComesFirst);
  return section;
}

}  // namespace

Result<std::vector<EventPair>> MatchEvents(const Profile& before, const Profile& after,
                                           const std::string& event,
                                           std::vector<std::string>& warnings) {
  std::vector<EventPair> pairs;
  if (!event.empty()) {
    const int64_t b = FindEvent(before, event);
    const int64_t a = FindEvent(after, event);
    if (b < 0 || a < 0) {
      return Fail(fmt::format("--event '{}': the {} recording has no such event", event,
                              b < 0 ? "baseline" : "new"));
    }
    for (const Profile* side : {&before, &after}) {
      const int64_t leader = LeaderOf(*side, static_cast<uint32_t>(side == &before ? b : a));
      if (leader < 0) continue;
      return Fail(fmt::format(
          "--event '{}': it has no samples of its own, its counts ride on {}'s (--event {})", event,
          side->event_name(leader), side->event_name(leader)));
    }
    pairs.push_back({static_cast<uint32_t>(b), static_cast<uint32_t>(a), event});
    return pairs;
  }
  for (uint32_t b : SampledEvents(before)) {
    const int64_t a = FindEvent(after, before.event_name(b));
    if (a < 0) {
      warnings.push_back(fmt::format("event '{}' is only in the baseline recording: not compared",
                                     before.event_name(b)));
      continue;
    }
    pairs.push_back({b, static_cast<uint32_t>(a), before.event_name(b)});
  }
  for (uint32_t a : SampledEvents(after)) {
    if (after.sample_count(a) != 0 && FindEvent(before, after.event_name(a)) < 0) {
      warnings.push_back(fmt::format("event '{}' is only in the new recording: not compared",
                                     after.event_name(a)));
    }
  }
  if (pairs.empty()) return Fail("the two recordings have no event in common");
  return pairs;
}

Result<std::vector<DiffSection>> DiffProfiles(const DiffInput& before, const DiffInput& after,
                                              const DiffOptions& options,
                                              std::vector<std::string>& warnings) {
  TRY_ASSIGN(auto pairs, MatchEvents(*before.profile, *after.profile, options.event, warnings));
  std::vector<DiffSection> sections;
  for (const EventPair& pair : pairs) sections.push_back(Compare(before, after, pair, options));
  return sections;
}

}  // namespace sample::report
