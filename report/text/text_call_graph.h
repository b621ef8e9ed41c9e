// Text drawing of the call tree under one flat-profile entry, in perf
// report --stdio's conventions: graph and fractal trees with |-- / --
// connectors and "---" for a chain that does not branch, flat blocks (a
// percentage, then the chain one frame a line) and folded lines ("P% a;b;c").
// Pure formatting over a CallNode tree built by BuildFlatProfile.
#pragma once

#include <cstdint>
#include <string>

#include "libsample/model/flat_profile.h"
#include "report/views/call_graph_spec.h"

namespace sample::report {

// How to draw: the -g spec, the period that is 100%, and the indentation.
struct CallGraphTextOptions {
  CallGraphSpec spec;
  uint64_t total = 0;  // what 100% is in graph, flat and folded mode
  size_t indent = 12;  // columns before the tree
};

// Appends the drawing of `root` (an entry's tree: its children start the
// paths) to `out`. Nothing is appended when every branch is under the
// threshold.
void AppendCallGraph(const Profile& profile, const CallNode& root,
                     const CallGraphTextOptions& options, std::string& out);

}  // namespace sample::report
