#include "report/export/export_input.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "report/load/jit_timeline.h"
#include "report/load/symbolization.h"

namespace sample::report {
namespace {

// JIT code: named by a perf map or by a jitdump.
bool IsJitDso(const std::string& path) { return IsPerfMapPath(path) || IsJitDumpDsoPath(path); }

// The events that get a section: those with samples (every event when none
// has any), in the file's order.
std::vector<uint32_t> EventsWithSamples(const Profile& profile) {
  std::vector<uint32_t> with, all;
  for (uint32_t e = 0; e < profile.event_count(); ++e) {
    all.push_back(e);
    if (profile.sample_count(e) != 0) with.push_back(e);
  }
  return with.empty() ? all : with;
}

}  // namespace

std::string_view FrameKindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::kUser: return "user";
    case FrameKind::kKernel: return "kernel";
    case FrameKind::kJit: return "jit";
    case FrameKind::kInlined: return "inlined";
    case FrameKind::kUnknown: return "unknown";
  }
  return "user";
}

std::span<const uint32_t> ExportInput::Frames(const ProfileSample& sample) const {
  std::span<const uint32_t> frames = profile().frames(sample);
  if (options.max_stack != 0 && frames.size() > options.max_stack) {
    frames = frames.first(options.max_stack);
  }
  return frames;
}

std::span<const FrameAddress> ExportInput::Addresses(const ProfileSample& sample) const {
  return profile().addresses(sample).first(Frames(sample).size());
}

FrameKind ExportInput::Kind(uint32_t id) const {
  const Function& function = profile().function(id);
  if (!function.known) return FrameKind::kUnknown;
  if (function.inlined) return FrameKind::kInlined;
  if (function.kernel) return FrameKind::kKernel;
  if (IsJitDso(profile().dso_name(function.dso))) return FrameKind::kJit;
  return FrameKind::kUser;
}

Result<ExportInput> BuildExportInput(const Recording& recording, const SampleFilter& filter,
                                     const ExportOptions& options, bool single,
                                     std::vector<std::string>& warnings) {
  const Profile& profile = recording.profile;
  std::vector<uint32_t> events;
  if (!options.event.empty()) {
    std::string names;
    for (uint32_t e = 0; e < profile.event_count(); ++e) {
      if (profile.event_name(e) == options.event) events.push_back(e);
      names += (names.empty() ? "" : ", ") + profile.event_name(e);
    }
    if (events.empty()) {
      return Fail(fmt::format("--event '{}': the recording has no such event (it has: {})",
                              options.event, names.empty() ? "none" : names));
    }
    events.resize(1);
    if (profile.sample_count(events[0]) == 0) {
      for (uint32_t leader = 0; leader < profile.event_count(); ++leader) {
        const std::vector<uint32_t>& members = profile.group_members(leader);
        if (std::find(members.begin(), members.end(), events[0]) == members.end()) continue;
        return Fail(fmt::format(
            "--event '{}': it has no samples of its own, its counts ride on {}'s (--event {})",
            options.event, profile.event_name(leader), profile.event_name(leader)));
      }
    }
  } else {
    events = EventsWithSamples(profile);
  }
  if (events.empty()) return Fail("the recording has no events");
  if (single && events.size() > 1) {
    std::string others;
    for (size_t i = 1; i < events.size(); ++i) {
      others += (i > 1 ? ", " : "") + profile.event_name(events[i]);
    }
    warnings.push_back(fmt::format("this format draws one event: showing {}, not {} (choose with "
                                   "--event NAME)",
                                   profile.event_name(events[0]), others));
    events.resize(1);
  }

  ExportInput input;
  input.recording = &recording;
  input.options = options;
  input.filter = filter;
  input.command_line = format::FindMetadata(recording.metadata, "cmdline").value_or("");
  std::vector<size_t> section_of(profile.event_count(), SIZE_MAX);
  for (uint32_t event : events) {
    section_of[event] = input.sections.size();
    input.sections.push_back(ExportSection{event, profile.event_name(event), {}, 0, 0});
  }
  const std::vector<ProfileSample>& samples = profile.samples();
  for (uint32_t i = 0; i < samples.size(); ++i) {
    const ProfileSample& s = samples[i];
    if (s.event >= section_of.size() || section_of[s.event] == SIZE_MAX) continue;
    if (!filter.empty() && !filter.Keeps(profile, s)) continue;
    ExportSection& section = input.sections[section_of[s.event]];
    section.samples.push_back(i);
    section.period += s.period;
    section.sample_count += s.samples;
  }
  return input;
}

StackTree BuildStackTree(const ExportInput& input, const ExportSection& section, bool by_comm) {
  // Samples of one command with the same interned stack (cut to the same
  // --max-stack length) walk the same path: walk each path once, with its
  // counts. A million samples have some thousands of stacks, and walking
  // each sample's path cost seconds of hash-table misses. Paths are added
  // in first-seen order so that equal recordings give equal trees.
  struct Counts {
    uint64_t samples = 0, period = 0;
  };
  struct KeyHash {
    size_t operator()(const std::array<uint32_t, 3>& k) const {
      uint64_t h = (uint64_t{k[0]} << 40) ^ (uint64_t{k[1]} << 8) ^ k[2];
      h ^= h >> 31;
      h *= 0x9E3779B97F4A7C15ull;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<std::array<uint32_t, 3>, size_t, KeyHash> index_of;
  std::vector<std::pair<std::array<uint32_t, 3>, Counts>> stacks;
  for (uint32_t index : section.samples) {
    const ProfileSample& s = input.sample(index);
    const std::array<uint32_t, 3> key = {s.comm, s.frames_begin,
                                         static_cast<uint32_t>(input.Frames(s).size())};
    auto [it, inserted] = index_of.try_emplace(key, stacks.size());
    if (inserted) stacks.emplace_back(key, Counts{});
    Counts& counts = stacks[it->second].second;
    counts.samples += s.samples;
    counts.period += s.period;
  }
  StackTree tree(by_comm);
  const Profile& profile = input.profile();
  for (const auto& [key, counts] : stacks) {
    const auto frames =
        profile.frames(ProfileSample{.frames_begin = key[1], .frames_count = key[2]});
    tree.Add(key[0], frames, counts.period, counts.samples);
  }
  tree.Sort(profile);
  return tree;
}

}  // namespace sample::report
