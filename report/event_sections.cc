#include "report/event_sections.h"

#include <algorithm>

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
    EventSection section;
    section.event = event;
    section.members = profile.group_members(event);
    if (section.members.empty()) {
      section.title = profile.event_name(event);
    } else {
      section.title = "anon group { " + profile.event_name(event);
      for (uint32_t m : section.members) section.title += ", " + profile.event_name(m);
      section.title += " }";
    }
    section.children = view.children.value_or(recording.callchains);
    section.call_graph = view.call_graph && view.call_graph->mode != CallGraphMode::kNone;

    FlatOptions flat;
    flat.event = event;
    flat.sort_keys = view.sort_keys;
    flat.children = section.children;
    flat.call_graph = section.call_graph;
    if (view.call_graph) flat.order = view.call_graph->order;
    flat.max_stack = view.max_stack;
    flat.filter = filter.empty() ? nullptr : &filter;
    section.flat = BuildFlatProfile(profile, flat);
    section.all_samples = profile.sample_count(event);
    section.filtered = !filter.empty();
    if (view.relative_percentage || filter.empty()) {
      section.percent_base = section.flat.period;
      section.member_bases = section.flat.member_periods;
    } else {
      section.percent_base = profile.total_period(event);
      section.member_bases = MemberTotals(profile, event, section.members);
    }
    section.frames = section.flat.frames;
    section.unknown_frames = section.flat.unknown_frames;
    sections.push_back(std::move(section));
  }
  return sections;
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
