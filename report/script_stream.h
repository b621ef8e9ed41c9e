// Streamed --script: perf script's text written to standard output as each
// sample is formatted, not built whole first. A real 79 MB recording made
// 6.5 GB of text before `--script | head -c 100` saw its first byte, and a
// crafted 21 KB one 3.77 GB in 188 s. Memory is the recording's and a
// 64 KiB buffer, whatever the output's size; when the reader goes away
// (`| head`) the first write after it ends the run (SIGPIPE, or EPIPE
// where SIGPIPE is ignored). -o and --format json still make their output
// whole: -o writes a complete file or none (output_file.h).
#pragma once

#include <string>

#include "report/load/recording.h"
#include "report/report_options.h"
#include "report/report_output.h"

namespace sample::report {

// Whether RunReport streams this run's output: --script as text to
// standard output.
bool StreamsScript(const ReportOptions& options);

// The output of such a run: its warnings now, and ReportOutput::stream,
// which writes `head` (the --header text asked for with it) and then the
// script of `recording`, filtered as options say, owning the recording.
ReportOutput StreamedScript(const ReportOptions& options, Recording recording, std::string head);

}  // namespace sample::report
