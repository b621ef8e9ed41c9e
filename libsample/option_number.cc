#include "libsample/option_number.h"

#include <charconv>

#include <fmt/format.h>

namespace sample {
namespace {

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// "-1", "-0.5": worth saying so, rather than "not a number".
bool Negative(std::string_view text) {
  return text.size() > 1 && text[0] == '-' && text[1] >= '0' && text[1] <= '9';
}

}  // namespace

Result<uint64_t> ParseWholeOption(std::string_view option, std::string_view text,
                                  std::string_view what, WholeRange range) {
  auto refuse = [&](std::string_view problem) {
    return Fail(fmt::format("{} '{}' is {}: {} takes a whole number from {} to {} ({})", option,
                            text, problem, option, range.min, range.max, what));
  };
  if (!AllDigits(text)) return refuse(Negative(text) ? "negative" : "not a whole number");
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) return refuse("too large");
  if (ec != std::errc() || end != text.data() + text.size()) return refuse("not a whole number");
  if (value < range.min) return refuse(value == 0 ? "zero" : "too small");
  if (value > range.max) return refuse("too large");
  return value;
}

Result<double> ParseDecimalOption(std::string_view option, std::string_view text,
                                  std::string_view what, DecimalRange range) {
  auto refuse = [&](std::string_view problem) {
    const std::string bounds = range.min_exclusive
                                   ? fmt::format("above {} and at most {}", range.min, range.max)
                                   : fmt::format("from {} to {}", range.min, range.max);
    return Fail(fmt::format("{} '{}' is {}: {} takes a number {} ({})", option, text, problem,
                            option, bounds, what));
  };
  // Digits with at most one point: no sign, exponent, "inf" or "nan".
  const size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  const bool digits = (AllDigits(whole) || whole.empty()) &&
                      (AllDigits(fraction) || fraction.empty()) &&
                      !(whole.empty() && fraction.empty());
  if (!digits) return refuse(Negative(text) ? "negative" : "not a number");
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (ec != std::errc() || end != text.data() + text.size()) return refuse("not a number");
  const bool below = range.min_exclusive ? value <= range.min : value < range.min;
  if (below) return refuse(value == 0 ? "zero" : "too small");
  if (value > range.max) return refuse("too large");
  return value;
}

}  // namespace sample
