// Percentages as the report computes, prints and reads them: one rule for
// a share of a total (0 of nothing is 0%, not a division by zero), one way
// to print it ("12.34%") and one reading of a percentage the user types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sample {

// `part` as a percentage of `whole` (0 when `whole` is 0).
inline double Percentage(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// "12.34%": two decimals, as perf prints shares.
std::string PercentText(double percent);

// A percentage as typed, without its '%' sign: digits and at most one
// decimal point, no sign or exponent ("0.5", "100"), at most 100. False for
// anything else; `out` is then unspecified.
bool ParsePercent(std::string_view text, double* out);

}  // namespace sample
