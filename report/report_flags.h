// sample-report's command line, as groups of options (libsample/cli/):
// each option declared once with its parsing and its checks, into
// ReportOptions.
//
// sample-top takes the rows group whole (-s, --children, --no-children,
// -n, --show-total-period, --percent-limit, --percentage).
#pragma once

#include <string>
#include <vector>

#include "libsample/cli/command_line.h"
#include "report/report_options.h"

namespace sample::report {

// -s --children --no-children -n --show-total-period --percent-limit --percentage.
void AddRowsGroup(cli::CommandLine& line, ViewOptions& view);

// What sample-report's command line asks for besides the report itself.
struct ReportRequest {
  ReportOptions options;
  bool help = false;
  bool version = false;
  bool stdio = false;  // --stdio
  bool tui = false;    // --tui
  std::vector<std::string> inputs;      // -i's files
  std::vector<std::string> diff_files;  // --diff's
};

// Every group of sample-report, filling `request`.
void AddReportGroups(cli::CommandLine& line, ReportRequest& request);

// --help's usage lines.
extern const char* const kReportUsage;

}  // namespace sample::report
