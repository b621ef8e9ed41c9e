// CallGraphSpec: perf report's -g/--call-graph argument,
// "[mode][,threshold][,order]" with the parts in perf's order:
//   mode       graph (default: percentages of the event's total), fractal
//              (percentages of the parent branch), flat (one block per
//              chain), folded (one line per chain, frames joined by ';'),
//              none (no call graph).
//   threshold  hide branches below this percentage (default 0.5): of the
//              total in graph, flat and folded mode, of the parent in
//              fractal mode.
//   order      caller or callee (see CallOrder in libsample/model/flat_profile.h).
// "function" (perf's sort key) is accepted as the only supported one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/model/flat_profile.h"
#include "libsample/result.h"

namespace sample::report {

enum class CallGraphMode { kNone, kGraph, kFractal, kFlat, kFolded };

struct CallGraphSpec {
  CallGraphMode mode = CallGraphMode::kGraph;
  double threshold = 0.5;          // percent
  std::optional<CallOrder> order;  // unset: perf's default for the mode
};

// An empty text gives the defaults. Errors quote the part not understood.
Result<CallGraphSpec> ParseCallGraphSpec(std::string_view text);

// "graph", "fractal", "flat", "folded" or "none", as -g spells the mode.
std::string_view CallGraphModeName(CallGraphMode mode);

// Whether `word` would be read as a call-graph argument: perf lets -g take
// the next word ("-g caller"), and so does report_flags.cc's -g.
bool IsCallGraphArgument(std::string_view word);

// The share a call-graph branch is shown with, in percent: of `total` in
// graph, flat and folded mode, of its parent's period in fractal mode.
// Branches under spec.threshold are hidden.
double BranchShare(const CallGraphSpec& spec, uint64_t period, uint64_t parent_period,
                   uint64_t total);

// The chains of `root` that end at a node (samples stop there), each as the
// node path from the root's child down, with the period that ends there;
// in tree order. Shared by the flat and folded modes of every printer and the JSON output.
struct EndingChain {
  std::vector<const CallNode*> nodes;
  uint64_t period = 0;
};
std::vector<EndingChain> EndingChains(const CallNode& root);

}  // namespace sample::report
