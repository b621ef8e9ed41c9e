#include "report/views/call_graph_spec.h"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "libsample/comma_list.h"
#include "libsample/percent.h"

namespace sample::report {
namespace {

constexpr std::array<std::pair<CallGraphMode, std::string_view>, 5> kModeNames = {{
    {CallGraphMode::kGraph, "graph"},
    {CallGraphMode::kFractal, "fractal"},
    {CallGraphMode::kFlat, "flat"},
    {CallGraphMode::kFolded, "folded"},
    {CallGraphMode::kNone, "none"},
}};

std::optional<CallGraphMode> ModeNamed(std::string_view word) {
  for (const auto& [mode, name] : kModeNames) {
    if (name == word) return mode;
  }
  return std::nullopt;
}

std::optional<CallOrder> OrderNamed(std::string_view word) {
  if (word == "caller") return CallOrder::kCaller;
  if (word == "callee") return CallOrder::kCallee;
  return std::nullopt;
}

void CollectChains(const CallNode& node, std::vector<const CallNode*>& path,
                   std::vector<EndingChain>& out) {
  uint64_t below = 0;
  for (const CallNode& c : node.children) below += c.period;
  if (!path.empty() && node.period > below) out.push_back({path, node.period - below});
  for (const CallNode& c : node.children) {
    path.push_back(&c);
    CollectChains(c, path, out);
    path.pop_back();
  }
}

}  // namespace

std::string_view CallGraphModeName(CallGraphMode mode) {
  for (const auto& [known, name] : kModeNames) {
    if (known == mode) return name;
  }
  return "";
}

Result<CallGraphSpec> ParseCallGraphSpec(std::string_view text) {
  CallGraphSpec spec;
  if (text.empty()) return spec;
  bool have_threshold = false;
  for (const std::string_view part : SplitCommaList(text)) {
    if (auto mode = ModeNamed(part)) {
      spec.mode = *mode;
    } else if (auto order = OrderNamed(part)) {
      spec.order = *order;
    } else if (part == "function") {
      // perf's default sort key of call chains; the only one we have.
    } else if (double value = 0; ParsePercent(part, &value)) {
      if (have_threshold) {
        return Fail(fmt::format("-g '{}': a print limit ('{}') is not supported", text, part));
      }
      spec.threshold = value;
      have_threshold = true;
    } else {
      return Fail(fmt::format(
          "-g '{}': '{}' is not understood (expected graph, fractal, flat, folded or none; a "
          "threshold percentage; caller or callee)",
          text, part));
    }
  }
  return spec;
}

bool IsCallGraphArgument(std::string_view word) {
  if (word.empty() || word[0] == '-') return false;
  return ParseCallGraphSpec(word).has_value();
}

double BranchShare(const CallGraphSpec& spec, uint64_t period, uint64_t parent_period,
                   uint64_t total) {
  const uint64_t base = spec.mode == CallGraphMode::kFractal ? parent_period : total;
  return Percentage(period, base);
}

std::vector<EndingChain> EndingChains(const CallNode& root) {
  std::vector<EndingChain> chains;
  std::vector<const CallNode*> path;
  CollectChains(root, path, chains);
  return chains;
}

}  // namespace sample::report
