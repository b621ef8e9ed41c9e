#include "report/export/speedscope_export.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "report/export/export_threads.h"
#include "report/json/json_writer.h"

namespace sample::report {
namespace {

constexpr std::string_view kSchema = "https://www.speedscope.app/file-format-schema.json";

// Shared frames: one per function, numbered in order of first use.
class FrameTable {
 public:
  explicit FrameTable(const ExportInput& input) : input_(input) {}

  uint32_t Index(uint32_t function) {
    auto [it, added] = index_.try_emplace(function, static_cast<uint32_t>(order_.size()));
    if (added) order_.push_back(function);
    return it->second;
  }

  // A sample's stack as the file writes it, "[root,...,leaf]", numbering
  // its new frames. Samples share interned stacks: each is written once.
  const std::string& StackText(const ProfileSample& s) {
    const std::span<const uint32_t> stack = input_.Frames(s);
    const uint64_t key = (uint64_t{s.frames_begin} << 32) | stack.size();
    auto [it, added] = stack_text_.try_emplace(key);
    if (!added) return it->second;
    std::string& text = it->second;
    text += '[';
    for (auto frame = stack.rbegin(); frame != stack.rend(); ++frame) {
      if (frame != stack.rbegin()) text += ',';
      fmt::format_to(std::back_inserter(text), "{}", Index(*frame));
    }
    text += ']';
    return text;
  }

  void Write(std::string& out) const {
    const Profile& profile = input_.profile();
    out += "  \"shared\": {\n    \"frames\": [";
    for (size_t i = 0; i < order_.size(); ++i) {
      const Function& function = profile.function(order_[i]);
      out += i == 0 ? "\n      " : ",\n      ";
      fmt::format_to(std::back_inserter(out), "{{\"name\": {}", JsonQuoted(FunctionLabel(function)));
      std::string_view file = profile.dso_name(function.dso);
      uint32_t line = 0;
      if (function.srcline != 0) {
        const std::string& srcline = profile.srcline(function.srcline);
        const size_t colon = srcline.rfind(':');
        if (colon != std::string::npos && colon != 0) {
          file = std::string_view(srcline).substr(0, colon);
          std::from_chars(srcline.data() + colon + 1, srcline.data() + srcline.size(), line);
        }
      }
      if (!file.empty()) fmt::format_to(std::back_inserter(out), ", \"file\": {}", JsonQuoted(file));
      if (line != 0) fmt::format_to(std::back_inserter(out), ", \"line\": {}", line);
      out += '}';
    }
    out += order_.empty() ? "]\n  },\n" : "\n    ]\n  },\n";
  }

 private:
  const ExportInput& input_;
  std::unordered_map<uint32_t, uint32_t> index_;
  std::vector<uint32_t> order_;
  std::unordered_map<uint64_t, std::string> stack_text_;  // (frames_begin, count) -> text
};

// A profile's entries in order: a sample's stack text, or nullptr for a
// gap (an empty stack), and its weight.
using Entries = std::vector<std::pair<const std::string*, uint64_t>>;

// A time event's samples laid on the thread's timeline: each stands for
// its period (CPU time) up to its timestamp, and the time the thread did
// not run between them becomes a gap, so that speedscope's "Time Order"
// axis is the recording's time. Gaps shorter than the sample's own period
// are not drawn (timestamps jitter); the axis then lags by less than one.
// Returns the position after the last entry, from `start`.
uint64_t TimeEntries(const ExportInput& input, const ExportThread& thread, uint64_t zero,
                     uint64_t start, FrameTable& frames, Entries& entries) {
  uint64_t position = start;
  for (uint32_t index : thread.samples) {
    const ProfileSample& s = input.sample(index);
    const uint64_t weight = std::max<uint64_t>(s.period, 1);  // speedscope drops weight 0
    const uint64_t at = s.time - std::min(s.time, zero);
    const uint64_t begins = at - std::min(at, weight);
    if (begins > position + weight) {
      entries.emplace_back(nullptr, begins - position);
      position = begins;
    }
    entries.emplace_back(&frames.StackText(s), weight);
    position += weight;
  }
  return position;
}

// speedscope's unit of a profile that does not count time.
const char* PeriodUnitOf(const ExportInput& input, uint32_t event) {
  return EventPeriodUnit(*input.recording, event) == PeriodUnit::kBytes ? "bytes" : "none";
}

// One thread's profile, written as text into `out` (its stacks already
// numbered in `frames`).
void WriteProfile(const ExportInput& input, const ExportThread& thread, uint64_t zero,
                  FrameTable& frames, std::string& out) {
  const ExportSection& section = input.sections[thread.section];
  const bool time = CountsTime(input, section.event);
  Entries entries;
  entries.reserve(thread.samples.size());
  uint64_t start = 0, end = 0;
  if (time && !thread.samples.empty()) {
    const ProfileSample& first = input.sample(thread.samples.front());
    const uint64_t first_at = first.time - std::min(first.time, zero);
    start = first_at - std::min(first_at, std::max<uint64_t>(first.period, 1));
    const ProfileSample& last = input.sample(thread.samples.back());
    end = std::max(last.time - std::min(last.time, zero),
                   TimeEntries(input, thread, zero, start, frames, entries));
  } else {
    for (uint32_t index : thread.samples) {
      const ProfileSample& s = input.sample(index);
      entries.emplace_back(&frames.StackText(s), input.Weight(s));
      end += input.Weight(s);
    }
  }
  out += "    {\n      \"type\": \"sampled\",\n";
  fmt::format_to(
      std::back_inserter(out), "      \"name\": {},\n",
      JsonQuoted(fmt::format("{} {}/{} ({})", thread.comm, thread.pid, thread.tid, section.name)));
  fmt::format_to(std::back_inserter(out),
                 "      \"unit\": \"{}\",\n      \"startValue\": {},\n      \"endValue\": {},\n",
                 time ? "nanoseconds" : PeriodUnitOf(input, section.event), start, end);
  const char* separator = "\n        ";
  out += "      \"samples\": [";
  for (const auto& [text, weight] : entries) {
    out += separator;
    out += text == nullptr ? "[]" : *text;
    separator = ",\n        ";
  }
  out += entries.empty() ? "],\n" : "\n      ],\n";
  out += "      \"weights\": [";
  separator = "\n        ";
  for (const auto& [text, weight] : entries) {
    fmt::format_to(std::back_inserter(out), "{}{}", separator, weight);
    separator = ",\n        ";
  }
  out += entries.empty() ? "]\n    }" : "\n      ]\n    }";
}

}  // namespace

Result<std::string> SpeedscopeExporter::Export(const ExportInput& input) {
  const std::vector<ExportThread> threads = SplitByThread(input);
  const uint64_t zero = TimelineZero(input);
  // The frames come first in the file: number them all before writing.
  FrameTable frames(input);
  size_t active = 0, total = 0;
  for (size_t i = 0; i < threads.size(); ++i) {
    for (uint32_t index : threads[i].samples) frames.StackText(input.sample(index));
    // Opened on the thread with the most samples: the one a user came for.
    if (threads[i].samples.size() > threads[active].samples.size()) active = i;
    total += threads[i].samples.size();
  }
  std::string out;
  out.reserve(total * 32);  // about a sample's stack and weight lines
  out += "{\n";
  fmt::format_to(std::back_inserter(out), "  \"$schema\": \"{}\",\n", kSchema);
  // The recorded command, which is what the profile is of.
  const std::string name = input.command_line.empty() ? "sample" : input.command_line;
  fmt::format_to(std::back_inserter(out),
                 "  \"name\": {},\n  \"exporter\": \"sample-report\",\n"
                 "  \"activeProfileIndex\": {},\n",
                 JsonQuoted(name), active);
  frames.Write(out);
  out += "  \"profiles\": [";
  for (size_t i = 0; i < threads.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    WriteProfile(input, threads[i], zero, frames, out);
  }
  out += threads.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace sample::report
