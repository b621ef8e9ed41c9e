// ReportCommand: the one thing a run of sample-report does, chosen once
// from its options (ChooseCommand), and the table (report_command.cc)
// that maps each command to its load plan (which loader stages run, what
// the load keeps) and its renderer (RunReport, report_runner.h):
//
//   report    the flat profile and call graphs per event, with --header,
//             --header-only or --stats: text or JSON (ReportPrinter)
//   script    one entry per sample, as perf script (streamed to stdout)
//   annotate  samples by instruction and source line
//   diff      two recordings compared, as perf diff
//   export    flame graphs and other tools' files (Exporter)
//   browse    the interactive browser on a terminal
//
// Which options combine with which command is checked here, once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"
#include "report/report_options.h"
#include "report/report_output.h"

namespace sample::report {

// Where the run's output may go, for the browser's choice.
struct CommandContext {
  bool stdio = false;     // --stdio
  bool tui = false;       // --tui
  bool terminal = false;  // standard input and output are a terminal
  bool progress = false;  // standard error is a terminal
};

std::string_view CommandName(ReportCommand command);

// The command `options` ask for, their combination checked; sets
// options.command and the load plan (options.load's stages and what they
// keep). `notes` gets what was chosen instead of the asked (no usable
// terminal: the text report).
Result<void> ChooseCommand(ReportOptions& options, const CommandContext& context,
                           std::vector<std::string>& notes);

// Runs options.command's renderer (report_runner.h). Errors: the file
// cannot be read, or the options do not fit it.
Result<ReportOutput> RunReport(const ReportOptions& options);

}  // namespace sample::report
