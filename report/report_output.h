// ReportOutput: what one run of sample-report gives, whichever runner made
// it (RunReport for one recording, RunDiff for two): the bytes for stdout
// or -o, and the warnings for stderr, each said once.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "libsample/result.h"

namespace sample::report {

struct ReportOutput {
  std::string text;
  std::vector<std::string> warnings;  // for stderr
  int status = 0;                     // the exit status (the terminal browser's)
  // When set, the output is not in `text`: this writes it to the file
  // descriptor given, piece by piece as it is made, once the warnings are
  // said (--script to standard output: script_stream.h). Errors carry the
  // write's errno (EPIPE: the reader went away).
  std::function<Result<void>(int fd)> stream = nullptr;
};

// `warnings` without repeats, in first-seen order: stages that look at the
// same binary (unwinding, symbolization) say the same thing about it.
std::vector<std::string> WithoutRepeats(std::vector<std::string> warnings);

}  // namespace sample::report
