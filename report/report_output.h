// ReportOutput: what one run of sample-report gives, whichever runner made
// it (RunReport for one recording, RunDiff for two): the bytes for stdout
// or -o, and the warnings for stderr, each said once.
#pragma once

#include <string>
#include <vector>

namespace sample::report {

struct ReportOutput {
  std::string text;
  std::vector<std::string> warnings;  // for stderr
  int status = 0;                     // the exit status (the terminal browser's)
};

// `warnings` without repeats, in first-seen order: stages that look at the
// same binary (unwinding, symbolization) say the same thing about it.
std::vector<std::string> WithoutRepeats(std::vector<std::string> warnings);

}  // namespace sample::report
