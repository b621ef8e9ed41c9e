// sample-record's command line, as groups of options (libsample/cli/):
// each option declared once with its parsing and its checks.
//
// sample-top takes the target, sampling and call-chain groups whole, and
// the --duration option, so the two programs cannot drift apart.
#pragma once

#include <optional>
#include <string>

#include "libsample/cli/command_line.h"
#include "record/counting_session.h"
#include "record/recorder.h"

namespace sample::record {

// -p -t -a -C --inherit --no-inherit.
void AddTargetGroup(cli::CommandLine& line, TargetOptions& target);
// -e --filter -F -c.
void AddSamplingGroup(cli::CommandLine& line, RecordOptions& options);
// -g --call-graph --max-stack --raise-max-stack.
void AddCallChainGroup(cli::CommandLine& line, RecordOptions& options);
// --duration, in `group`.
void AddDurationOption(cli::Group& group, RecordOptions& options);

// What sample-record's command line asks for.
struct RecordRequest {
  RecordOptions record;
  bool stat = false;  // --stat: count instead (record/counting/)
  CountingOptions counting;
  bool help = false;
  bool version = false;
  std::optional<std::string> list_events;  // --list-events [GLOB]
};

// Every group of sample-record, filling `request`.
void AddRecordGroups(cli::CommandLine& line, RecordRequest& request);

// --help's usage lines.
extern const char* const kRecordUsage;

}  // namespace sample::record
