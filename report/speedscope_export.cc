#include "report/speedscope_export.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "report/export_threads.h"
#include "report/json_writer.h"

namespace sample::report {
namespace {

constexpr std::string_view kSchema = "https://www.speedscope.app/file-format-schema.json";

std::string Quoted(std::string_view text) {
  JsonWriter json;
  json.String(text);
  std::string out = json.Take();
  out.pop_back();  // Take()'s final line break
  return out;
}

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
      fmt::format_to(std::back_inserter(out), "{{\"name\": {}", Quoted(FunctionLabel(function)));
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
      if (!file.empty()) fmt::format_to(std::back_inserter(out), ", \"file\": {}", Quoted(file));
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

// One thread's profile, written as text into `out` (its stacks already
// numbered in `frames`).
void WriteProfile(const ExportInput& input, const ExportThread& thread, uint64_t zero,
                  FrameTable& frames, std::string& out) {
  const ExportSection& section = input.sections[thread.section];
  const bool time = CountsTime(input, section.event);
  // A zero weight would make speedscope drop the sample.
  auto weight_of = [&](const ProfileSample& s) {
    return time ? std::max<uint64_t>(s.period, 1) : input.Weight(s);
  };
  uint64_t total = 0;
  for (uint32_t index : thread.samples) total += weight_of(input.sample(index));
  // A time event's samples stand for the period before them: the timeline
  // runs from the first one's start to the last one, and is never shorter
  // than the weights (speedscope would stretch it).
  uint64_t start = 0, end = total;
  if (time && !thread.samples.empty()) {
    const ProfileSample& first = input.sample(thread.samples.front());
    const uint64_t first_at = first.time - std::min(first.time, zero);
    start = first_at - std::min(first_at, weight_of(first));
    const ProfileSample& last = input.sample(thread.samples.back());
    end = std::max(last.time - std::min(last.time, zero), start + total);
  }
  out += "    {\n      \"type\": \"sampled\",\n";
  fmt::format_to(
      std::back_inserter(out), "      \"name\": {},\n",
      Quoted(fmt::format("{} {}/{} ({})", thread.comm, thread.pid, thread.tid, section.name)));
  fmt::format_to(std::back_inserter(out),
                 "      \"unit\": \"{}\",\n      \"startValue\": {},\n      \"endValue\": {},\n",
                 time ? "nanoseconds" : "none", start, end);
  const char* separator = "\n        ";
  out += "      \"samples\": [";
  for (uint32_t index : thread.samples) {
    out += separator;
    out += frames.StackText(input.sample(index));
    separator = ",\n        ";
  }
  out += thread.samples.empty() ? "],\n" : "\n      ],\n";
  out += "      \"weights\": [";
  separator = "\n        ";
  for (uint32_t index : thread.samples) {
    fmt::format_to(std::back_inserter(out), "{}{}", separator, weight_of(input.sample(index)));
    separator = ",\n        ";
  }
  out += thread.samples.empty() ? "]\n    }" : "\n      ]\n    }";
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
                 Quoted(name), active);
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
