// sample-record: record a command's samples into a sample.data file. The
// options are record_flags.h's; the work is RunRecording's (recorder.h) or
// RunCounting's (counting/counting_session.h).
#include <iostream>
#include <string>
#include <vector>

#include "libsample/cli/command_line.h"
#include "libsample/version.h"
#include "record/counting_session.h"
#include "record/events/event_listing.h"
#include "record/record_flags.h"
#include "record/recorder.h"

namespace {

// A failure's exit status: the error's own, else 1.
int Failed(const sample::Error& error) {
  std::cerr << "sample-record: " << error.message << "\n";
  return error.exit_status != 0 ? error.exit_status : 1;
}

}  // namespace

int main(int argc, char** argv) {
  sample::record::RecordRequest request;
  sample::record::RecordOptions& options = request.record;
  for (int i = 0; i < argc; ++i) options.invocation.push_back(argv[i]);
  sample::cli::CommandLine line(sample::record::kRecordUsage);
  sample::record::AddRecordGroups(line, request);
  if (auto given = line.Parse(sample::cli::Arguments(argc, argv), &options.target.command);
      !given) {
    std::cerr << "sample-record: " << given.error().message << "\n" << line.usage();
    return 2;
  }
  if (request.help) {
    std::cout << line.Help();
    return 0;
  }
  if (request.version) {
    std::cout << sample::VersionLine("sample-record") << "\n";
    return 0;
  }
  if (request.list_events) return sample::record::ListEvents(*request.list_events);
  if (request.stat) {
    auto status = sample::record::RunCounting(options, request.counting);
    return status ? *status : Failed(status.error());
  }
  auto summary = sample::record::RunRecording(options);
  return summary ? summary->exit_status : Failed(summary.error());
}
