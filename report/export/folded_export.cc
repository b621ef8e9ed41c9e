#include "report/export/folded_export.h"

#include <algorithm>
#include <array>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace sample::report {
namespace {

// `name` with the characters the format reserves replaced.
std::string Frame(std::string name) {
  std::replace_if(
      name.begin(), name.end(), [](char c) { return c == ';' || c == '\n' || c == '\r'; }, '_');
  return name;
}

}  // namespace

Result<std::string> FoldedExporter::Export(const ExportInput& input) {
  const Profile& profile = input.profile();
  const ExportSection& section = input.sections.front();
  // Samples with the same stack share its interned frames, so (comm, first
  // frame, count) names a stack; its text is made once.
  struct KeyHash {
    size_t operator()(const std::array<uint32_t, 3>& k) const {
      return (size_t{k[0]} * 0x9E3779B97F4A7C15ull) ^ (size_t{k[1]} << 20) ^ k[2];
    }
  };
  std::unordered_map<std::array<uint32_t, 3>, uint64_t, KeyHash> by_stack;
  for (uint32_t index : section.samples) {
    const ProfileSample& s = input.sample(index);
    const auto count = static_cast<uint32_t>(input.Frames(s).size());
    by_stack[{s.comm, s.frames_begin, count}] += input.Weight(s);
  }
  // Stacks cut by --max-stack may become equal: sum them by their text.
  std::map<std::string, uint64_t> by_text;
  for (const auto& [key, weight] : by_stack) {
    std::string line = Frame(profile.comm(key[0]));
    const auto stack = std::span<const uint32_t>(profile.frames(ProfileSample{
                                                     .frames_begin = key[1],
                                                     .frames_count = key[2]}));
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      line += ';';
      line += Frame(FunctionLabel(profile.function(*it)));
    }
    by_text[std::move(line)] += weight;
  }
  std::string out;
  for (const auto& [line, weight] : by_text) fmt::format_to(std::back_inserter(out), "{} {}\n", line, weight);
  return out;
}

}  // namespace sample::report
