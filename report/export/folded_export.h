// FoldedExporter (--format folded): one line per distinct stack,
// "comm;outermost;...;leaf COUNT", as flamegraph.pl and inferno read them
// (Brendan Gregg's folded format). COUNT is the number of samples, or their
// period with --folded-weight period. Lines are sorted, so equal
// recordings give equal files. Frames are the report's function names
// (inlined calls included); ';' and line breaks inside a name, which the
// format cannot carry, become '_'. One event: the first with samples, or
// --event's.
#pragma once

#include "report/export/exporter.h"

namespace sample::report {

class FoldedExporter final : public Exporter {
 public:
  bool single_section() const override { return true; }
  Result<std::string> Export(const ExportInput& input) override;
};

}  // namespace sample::report
