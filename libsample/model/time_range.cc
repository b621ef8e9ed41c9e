#include "libsample/model/time_range.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "libsample/comma_list.h"
#include "libsample/percent.h"

namespace sample {
namespace {

// A non-negative decimal number (no sign, no exponent).
bool ParseNumber(std::string_view text, double* out) {
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return false;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(*out);
}

// "12.5%": a percentage with its sign, as perf's --time takes it.
bool ParsePercentSign(std::string_view text, double* out) {
  return text.ends_with('%') && ParsePercent(text.substr(0, text.size() - 1), out);
}

// The time `percent` of the way from first to last.
uint64_t At(double percent, uint64_t first, uint64_t last) {
  const double span = static_cast<double>(last - first);
  return first + static_cast<uint64_t>(std::llround(span * percent / 100.0));
}

TimeRange PercentWindow(double from, double to, uint64_t first, uint64_t last) {
  // The window closes at 100% inclusively: the last sample belongs to it.
  const uint64_t end = to >= 100.0 ? last + 1 : At(to, first, last);
  return TimeRange{At(from, first, last), end};
}

}  // namespace

Result<TimeSpec> TimeSpec::Parse(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Fail(
        fmt::format("bad --time '{}': {} (expected START,END in seconds after the first "
                    "sample, P%/N or A%-B%)",
                    text, why));
  };
  TimeSpec spec;
  if (text.find('%') == std::string_view::npos) {
    const auto parts = SplitCommaList(text);
    if (parts.size() > 2) return bad("more than one comma");
    double start = 0, end = 0;
    const bool has_start = !parts[0].empty();
    const bool has_end = parts.size() == 2 && !parts[1].empty();
    if (!has_start && !has_end) return bad("no start and no end");
    if (has_start && !ParseNumber(parts[0], &start)) return bad("start is not a number");
    if (has_end && !ParseNumber(parts[1], &end)) return bad("end is not a number");
    if (has_end && end < start) return bad("end before start");
    spec.ranges_.push_back(Range{false, start, has_end ? std::optional(end) : std::nullopt});
    return spec;
  }
  for (const std::string_view item : SplitCommaList(text)) {
    const size_t slash = item.find('/');
    const size_t dash = item.find('-');
    if (slash != std::string_view::npos) {
      double size = 0;
      unsigned index = 0;
      const std::string_view n = item.substr(slash + 1);
      auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
      if (!ParsePercentSign(item.substr(0, slash), &size) || size <= 0 || ec != std::errc() ||
          end != n.data() + n.size() || index == 0) {
        return bad(fmt::format("cannot parse '{}'", item));
      }
      if (size * (index - 1) >= 100.0) return bad(fmt::format("slice '{}' is past 100%", item));
      spec.ranges_.push_back(Range{true, size * (index - 1), std::min(100.0, size * index)});
    } else if (dash != std::string_view::npos) {
      double from = 0, to = 0;
      if (!ParsePercentSign(item.substr(0, dash), &from) ||
          !ParsePercentSign(item.substr(dash + 1), &to) || to < from) {
        return bad(fmt::format("cannot parse '{}'", item));
      }
      spec.ranges_.push_back(Range{true, from, to});
    } else {
      return bad(fmt::format("'{}' is neither P%/N nor A%-B%", item));
    }
  }
  return spec;
}

std::vector<TimeRange> TimeSpec::Windows(uint64_t first, uint64_t last) const {
  if (last < first) last = first;
  std::vector<TimeRange> windows;
  for (const Range& r : ranges_) {
    if (r.percent) {
      windows.push_back(PercentWindow(r.from, *r.to, first, last));
      continue;
    }
    TimeRange w;
    w.start = first + static_cast<uint64_t>(std::llround(r.from * 1e9));
    w.end = r.to ? first + static_cast<uint64_t>(std::llround(*r.to * 1e9)) + 1 : UINT64_MAX;
    windows.push_back(w);
  }
  return windows;
}

Result<std::vector<TimeRange>> ParseTimeRanges(std::string_view text, uint64_t first,
                                               uint64_t last) {
  TRY_ASSIGN(auto spec, TimeSpec::Parse(text));
  return spec.Windows(first, last);
}

}  // namespace sample
