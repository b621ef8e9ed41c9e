// sample-report: print profiles from a recording (sample.data or perf.data).
// The options are report_flags.h's, the command they ask for
// report_command.h's; what it prints goes to standard output or -o.
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <string>
#include <vector>

#include "libsample/cli/command_line.h"
#include "libsample/file_limit.h"
#include "libsample/version.h"
#include "report/output_file.h"
#include "report/export/output_format.h"
#include "report/report_command.h"
#include "report/report_flags.h"
#include "report/text/display_text.h"

namespace {

// Messages quote paths and names from the file: one line each, no control
// characters.
void Say(const std::string& message, const char* kind = "") {
  std::cerr << "sample-report: " << kind << sample::report::ShowableText(message, false) << "\n";
}

// Where the output goes: standard output (streamed or whole) or -o's file.
int Deliver(const sample::report::ReportOptions& options, sample::report::ReportOutput& output) {
  if (output.stream) {
    // Streamed (--script): a reader that went away (`| head`) ends the run
    // quietly, as SIGPIPE would where it is not ignored.
    auto written = output.stream(STDOUT_FILENO);
    if (!written && written.error().sys_errno != EPIPE) Say(written.error().message);
    return written ? output.status : 1;
  }
  if (!options.output.empty()) {
    auto written = sample::report::WriteOutputFile(options.output, output.text);
    if (!written) Say(written.error().message);
    return written ? 0 : 1;
  }
  if (sample::report::IsBinary(options.format) && isatty(STDOUT_FILENO)) {
    Say(std::string("--format ") + std::string(sample::report::FormatName(options.format)) +
        " writes binary data; give -o FILE or redirect standard output");
    return 1;
  }
  std::cout << output.text;
  return output.status;
}

}  // namespace

int main(int argc, char** argv) {
  // libdw keeps every binary it unwinds through open.
  sample::RaiseOpenFileLimit();
  sample::report::ReportRequest request;
  sample::report::ReportOptions& options = request.options;
  sample::cli::CommandLine line(sample::report::kReportUsage);
  sample::report::AddReportGroups(line, request);
  std::vector<std::string> notes;
  auto given = line.Parse(sample::cli::Arguments(argc, argv));
  if (given && request.help) {
    std::cout << line.Help();
    return 0;
  }
  if (given && request.version) {
    std::cout << sample::VersionLine("sample-report") << "\n";
    return 0;
  }
  const sample::report::CommandContext context{
      request.stdio, request.tui, isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0,
      isatty(STDERR_FILENO) != 0};
  auto chosen = given ? sample::report::ChooseCommand(options, context, notes)
                      : sample::Result<void>(tl::unexpected(given.error()));
  if (!chosen) {
    std::cerr << "sample-report: " << chosen.error().message << "\n" << line.usage();
    return 2;
  }
  for (const std::string& note : notes) Say(note);
  auto output = sample::report::RunReport(options);
  if (!output) {
    Say(output.error().message);
    return 1;
  }
  for (const std::string& warning : output->warnings) Say(warning, "warning: ");
  return Deliver(options, *output);
}
