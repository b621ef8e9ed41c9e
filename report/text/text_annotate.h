// The annotate view as text, in perf annotate --stdio's layout: per
// function a heading (binary, event, samples), then each instruction as
// `PERCENT :   ADDR:   TEXT`, with a line `: LINE   source text` (or the
// file and line when the source is not at hand) before each run of
// instructions from one source line, and `name():` when the inlined call
// the instructions came from changes. With --annotate-source, one line per
// source line of the function with the share of its instructions.
#pragma once

#include <string>

#include "report/views/annotate_view.h"

namespace sample::report {

// Source files are read once each, from the paths DWARF gives.
std::string FormatAnnotate(const AnnotateView& view, bool source_only);

}  // namespace sample::report
