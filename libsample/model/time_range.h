// Time ranges for perf report's --time option, relative to a recording's
// first and last sample. (perf calls them time windows; in this code
// "window" is kept for the on..off windows of toggle events.)
//
// Accepted forms:
//   "START,END"      seconds after the first sample (decimals allowed); either
//                    side may be empty ("1.5," = from 1.5 s to the end,
//                    ",2" = the first two seconds); both ends inclusive.
//   "P%/N"           the N-th (1-based) slice of P% of the duration:
//                    "10%/2" is 10%..20%.
//   "A%-B%"          from A% to B% of the duration.
// Percent items may be repeated, comma-separated ("10%/1,10%/3"); a sample
// in any of them is kept. Percent ranges include their start and exclude
// their end, except at 100%, so adjacent slices never share a sample.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

// [start, end) in perf clock nanoseconds.
struct TimeRange {
  uint64_t start = 0;
  uint64_t end = 0;
  bool operator==(const TimeRange&) const = default;
};

// A --time value as the user wrote it, checked, before the recording it
// applies to is known: its ranges are relative to the first and last
// sample, so one spec serves any number of recordings (--diff has two).
class TimeSpec {
 public:
  // Errors quote the text and say what was expected.
  static Result<TimeSpec> Parse(std::string_view text);

  // The ranges in perf clock time, for a recording whose first and last
  // samples were taken at `first` and `last`.
  std::vector<TimeRange> Windows(uint64_t first, uint64_t last) const;

 private:
  // Seconds after the first sample ("START,END", both ends inclusive;
  // `to` unset: to the end), or percentages of the duration.
  struct Range {
    bool percent = false;
    double from = 0;
    std::optional<double> to;
  };
  std::vector<Range> ranges_;
};

// TimeSpec::Parse(text), then its Windows(first, last).
Result<std::vector<TimeRange>> ParseTimeRanges(std::string_view text, uint64_t first,
                                               uint64_t last);

}  // namespace sample
