// The renderers of sample-report's commands (report_command.h maps each
// command to one): each loads what it needs (LoadRecording, with the load
// plan ChooseCommand set), applies the filter options (a SampleFilter),
// computes its view and renders it in the chosen format.
//   RunProfile   the flat profile per event, or with --header-only the
//                header, with --stats the statistics (--header: the header
//                first); text or JSON
//   RunScript    one entry per sample (streamed: script_stream.h)
//   RunAnnotate  the annotate view, from the annotate cache when it holds it
//   RunExport    the samples in an export format (Exporter)
//   RunBrowse    the terminal browser
// (RunDiff, two recordings compared: diff/diff_runner.h.)
#pragma once

#include "libsample/result.h"
#include "report/report_options.h"
#include "report/report_output.h"

namespace sample::report {

// Errors: the file cannot be read, or the options do not fit it.
Result<ReportOutput> RunProfile(const ReportOptions& options);
Result<ReportOutput> RunScript(const ReportOptions& options);
Result<ReportOutput> RunAnnotate(const ReportOptions& options);
Result<ReportOutput> RunExport(const ReportOptions& options);
Result<ReportOutput> RunBrowse(const ReportOptions& options);

}  // namespace sample::report
