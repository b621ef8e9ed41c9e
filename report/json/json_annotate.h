// The annotate view as one JSON document: per function its name, binary,
// samples and extent, and one entry per instruction (address, bytes, text,
// samples, period, source file and line, inlined calls).
#pragma once

#include <string>

#include "report/views/annotate_view.h"

namespace sample::report {

std::string AnnotateJson(const AnnotateView& view);

}  // namespace sample::report
