// SpeedscopeExporter (--format speedscope, -o x.speedscope.json): the file
// speedscope (www.speedscope.app) opens, in its documented format
// (file-format-schema.json): one frame list shared by all profiles, then
// one "sampled" profile per thread and event, named "comm pid/tid (event)",
// its samples in time order (frame indexes, root first) so that the "Time
// Order" view follows the recording. For time events (cpu-clock,
// task-clock) the unit is nanoseconds and each sample weighs its period,
// the CPU time it stands for, with the time the thread did not run between
// samples as gaps (empty stacks) so the axis is the recording's clock;
// other events have unit "none" and weigh 1 or their period as
// --folded-weight says. Frames are keyed by function (the
// same name in two binaries is two frames); "file" is the source file when
// source lines are loaded (--sort srcline), else the binary, with "line"
// when known. Threads are sorted, frames numbered in order of first use,
// so equal recordings give equal files.
#pragma once

#include "report/export/exporter.h"

namespace sample::report {

class SpeedscopeExporter final : public Exporter {
 public:
  Result<std::string> Export(const ExportInput& input) override;
};

}  // namespace sample::report
