// RunDiff: `sample-report --diff BASE [NEW]`, perf diff's comparison of two
// recordings. Both are loaded with the same load options and filtered by
// the same options (each filter made for its own recording), compared per
// event by ProfileDiff, and printed as a table (text), JSON, or drawn as a
// differential flame graph by the SVG exporter (ExportInput::baseline).
#pragma once

#include "libsample/result.h"
#include "report/report_options.h"
#include "report/report_output.h"

namespace sample::report {

// Errors: --diff with a view that shows one recording (--header,
// --header-only, --stats, --script) or a format that cannot show a
// comparison; a file that cannot be read; no event in common. (Filters
// are parsed, and refused, where the options are read.)
Result<ReportOutput> RunDiff(const ReportOptions& options);

// The first of those errors, checked before loading anything (main.cc
// calls it while parsing options).
Result<void> CheckDiffOptions(const ReportOptions& options);

}  // namespace sample::report
