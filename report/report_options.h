// ReportOptions: everything sample-report was asked for, as plain values.
// report_flags.cc fills it from the command line, ChooseCommand
// (report_command.h) picks the command and its load plan, and RunReport
// turns it into output. Defaults match perf report's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "libsample/model/flat_profile.h"
#include "libsample/model/sample_filter.h"
#include "report/export/export_input.h"
#include "report/load/recording_loader.h"
#include "report/export/output_format.h"
#include "report/views/annotate_view.h"
#include "report/views/call_graph_spec.h"
#include "report/views/view_options.h"

namespace sample::report {

// What a run does (report_command.h), chosen once from the options.
enum class ReportCommand { kReport, kScript, kAnnotate, kDiff, kExport, kBrowse };

struct ReportOptions {
  ReportCommand command = ReportCommand::kReport;
  std::string input = "sample.data";
  LoadOptions load;
  ViewOptions view;
  // --comm, --pid, --tid, --cpu, --dso, --symbols and --time, parsed by
  // report_flags.cc; each recording loaded makes its SampleFilter from them.
  SampleFilterSpec filters;
  OutputFormat format = OutputFormat::kText;
  // Where the output goes (-o); empty: standard output.
  std::string output;
  // The exports' choices (--event, --folded-weight, --icicle); max_stack is
  // view.max_stack.
  ExportOptions exports;
  bool header = false;       // header, then the report
  bool header_only = false;  // only the header
  bool stats = false;        // only the statistics
  bool script = false;       // one entry per sample instead of the profile
  AnnotateOptions annotate;  // --annotate: instructions and source lines instead
  // The options that shape --annotate's index, as one text (report_flags.cc): the
  // annotate cache's key (report/annotate_cache.h); empty: no cache
  // (--no-cache).
  std::string annotate_cache;
  std::string diff_base;     // --diff BASE: compare BASE with `input` (report/diff/diff_runner.h)
};

}  // namespace sample::report
