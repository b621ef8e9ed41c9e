// GeckoExporter (--format gecko, -o x.gecko.json): the Gecko profile
// format the Firefox Profiler (profiler.firefox.com) opens, as perf's gecko
// script writes it (format version 24, which the profiler upgrades on
// load): meta (start time in ms since the epoch, the sampling interval,
// categories User/Kernel/JIT/Other coloured yellow/orange/green/grey,
// presymbolicated), then one thread per recorded thread and event, each
// with its own string, frame and stack tables and its samples in time
// order (ms since meta.startTime). Frames are "function (in binary)", one
// per function, their category from the frame's kind. Threads are sorted,
// table rows numbered in order of first use, so equal recordings give
// equal files. libs is empty: the frames are named already.
#pragma once

#include "report/export/exporter.h"

namespace sample::report {

class GeckoExporter final : public Exporter {
 public:
  Result<std::string> Export(const ExportInput& input) override;
};

}  // namespace sample::report
