#include "report/views/event_sections.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace sample::report {
namespace {

// Unfiltered member totals of `event`'s group (for absolute percentages).
std::vector<uint64_t> MemberTotals(const Profile& profile, uint32_t event,
                                   const std::vector<uint32_t>& members) {
  std::vector<uint64_t> totals(members.size(), 0);
  for (const ProfileSample& s : profile.samples()) {
    if (s.event != event) continue;
    for (const MemberCount& read : profile.reads(s)) {
      auto it = std::find(members.begin(), members.end(), read.event);
      if (it != members.end()) totals[it - members.begin()] += read.count;
    }
  }
  return totals;
}

// The threads with samples of `event`, by tid, with a command name each.
std::map<uint32_t, uint32_t> ThreadsOf(const Profile& profile, uint32_t event) {
  std::map<uint32_t, uint32_t> threads;
  for (const ProfileSample& s : profile.samples()) {
    if (s.event == event) threads[s.tid] = s.comm;
  }
  return threads;
}

EventSection BuildSection(const Recording& recording, const ViewOptions& view,
                          const SampleFilter& filter, uint32_t event, uint32_t tid) {
  const Profile& profile = recording.profile;
  EventSection section;
  section.event = event;
  section.tid = tid;
  section.members = profile.group_members(event);
  if (section.members.empty()) {
    section.title = profile.event_name(event);
  } else {
    section.title = "anon group { " + profile.event_name(event);
    for (uint32_t m : section.members) section.title += ", " + profile.event_name(m);
    section.title += " }";
  }
  section.unit = EventPeriodUnit(recording, event);
  section.time_weighted = section.unit == PeriodUnit::kNanoseconds;
  section.children = view.children.value_or(recording.callchains);
  section.call_graph = view.call_graph && view.call_graph->mode != CallGraphMode::kNone;

  FlatOptions flat;
  flat.event = event;
  flat.tid = tid;
  flat.sort_keys = view.sort_keys;
  flat.children = section.children;
  flat.call_graph = section.call_graph;
  if (view.call_graph) flat.order = view.call_graph->order;
  flat.max_stack = view.max_stack;
  flat.filter = filter.empty() ? nullptr : &filter;
  section.flat = BuildFlatProfile(profile, flat);
  section.filtered = !filter.empty();
  if (tid == FlatEntry::kAny) {
    section.all_samples = profile.sample_count(event);
  } else {
    FlatOptions all = flat;
    all.filter = nullptr;
    all.call_graph = false;
    const FlatProfile unfiltered = BuildFlatProfile(profile, all);
    section.all_samples = unfiltered.samples;
    if (!view.relative_percentage && !filter.empty()) section.percent_base = unfiltered.period;
  }
  if (view.relative_percentage || filter.empty()) {
    section.percent_base = section.flat.period;
    section.member_bases = section.flat.member_periods;
  } else if (tid == FlatEntry::kAny) {
    section.percent_base = profile.total_period(event);
    section.member_bases = MemberTotals(profile, event, section.members);
  }
  section.frames = section.flat.frames;
  section.unknown_frames = section.flat.unknown_frames;
  return section;
}

}  // namespace

std::vector<EventSection> BuildEventSections(const Recording& recording, const ViewOptions& view,
                                             const SampleFilter& filter) {
  const Profile& profile = recording.profile;
  std::vector<EventSection> sections;
  const auto event_count = static_cast<uint32_t>(profile.event_count());
  bool any_samples = false;
  for (uint32_t e = 0; e < event_count; ++e) any_samples |= profile.sample_count(e) != 0;
  for (uint32_t event = 0; event < event_count; ++event) {
    if (profile.sample_count(event) == 0 && any_samples) continue;
    if (event != recording.wall_event) {
      sections.push_back(BuildSection(recording, view, filter, event, FlatEntry::kAny));
      continue;
    }
    // A wall-clock profile is a thread's: its time on and off the CPU.
    for (const auto& [tid, comm] : ThreadsOf(profile, event)) {
      EventSection section = BuildSection(recording, view, filter, event, tid);
      if (section.flat.samples == 0) continue;
      section.title = fmt::format("wall, thread {} ({})", tid, profile.comm(comm));
      sections.push_back(std::move(section));
    }
  }
  return sections;
}

std::string FormatNs(uint64_t ns) {
  const auto n = static_cast<double>(ns);
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1'000'000) return fmt::format("{:.1f} us", n / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:.1f} ms", n / 1e6);
  return fmt::format("{:.2f} s", n / 1e9);
}

std::vector<const FlatEntry*> ShownEntries(const EventSection& section, double percent_limit) {
  std::vector<const FlatEntry*> shown;
  for (const FlatEntry& e : section.flat.entries) {
    const uint64_t period = section.children ? e.children_period : e.self_period;
    if (period == 0 || Percentage(period, section.percent_base) < percent_limit) continue;
    shown.push_back(&e);
  }
  return shown;
}

}  // namespace sample::report
