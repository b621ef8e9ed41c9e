#include "libsample/percent.h"

#include <charconv>
#include <system_error>

#include <fmt/format.h>

namespace sample {

std::string PercentText(double percent) { return fmt::format("{:.2f}%", percent); }

bool ParsePercent(std::string_view text, double* out) {
  // from_chars alone would take "inf", "nan", "-1" and "1e2".
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return false;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out <= 100.0;
}

}  // namespace sample
