// Numbers given on the command line (-c, -F, -m, -D, --duration, -j, ...).
//
// Boost.Program_options reads "-1" into an unsigned option as 2^64 - 1 and
// "nan" into a double, so numeric options are taken as text and read here:
// only plain decimal digits (no sign, no spaces), within the range the
// option allows, and an error that names the option and says what it takes.
#pragma once

#include <cstdint>
#include <string_view>

#include "libsample/result.h"

namespace sample {

struct WholeRange {
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
};

struct DecimalRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;  // (min, max] instead of [min, max]
};

// `option` is how the user wrote it ("-D"), `what` what the number counts
// ("milliseconds"), both for the message: "-D '-1' is negative: -D takes a
// whole number from 0 to 4294967295 (milliseconds)".
Result<uint64_t> ParseWholeOption(std::string_view option, std::string_view text,
                                  std::string_view what, WholeRange range);

// Decimal numbers ("1.5", "10"): finite, no sign, no exponent.
Result<double> ParseDecimalOption(std::string_view option, std::string_view text,
                                  std::string_view what, DecimalRange range);

}  // namespace sample
