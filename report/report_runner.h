// RunReport: sample-report's work after option parsing. Loads the file,
// applies the filter options to it (a SampleFilter), computes the views asked for
// and renders them with the printer of the chosen format:
//   --header-only        the header
//   --stats              the statistics (after the header with --header)
//   --script             one entry per sample (after the header with --header)
//   otherwise            the flat profile per event (after the header with --header)
// or, with --diff BASE, the comparison of BASE and the input (RunDiff).
#pragma once

#include "libsample/model/sample_filter.h"
#include "libsample/result.h"
#include "report/report_options.h"
#include "report/report_output.h"

namespace sample::report {

// Errors: the file cannot be read, or the options do not fit it.
Result<ReportOutput> RunReport(const ReportOptions& options);

}  // namespace sample::report
