#include "libsample/events/name_suggestions.h"

#include "libsample/string_parts.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>

namespace sample {
namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> CloseMatches(std::string_view query,
                                      const std::vector<NameCandidate>& candidates) {
  const std::string q = Lowercase(query);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const NameCandidate& c : candidates) {
    const std::string key = Lowercase(c.key);
    const size_t distance = EditDistance(q, key);
    if (distance <= std::max<size_t>(2, q.size() / 3) ||
        (q.size() >= 3 && key.find(q) != std::string::npos)) {
      scored.emplace_back(distance, c.shown);
    }
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> close;
  for (auto& [distance, shown] : scored) {
    if (std::find(close.begin(), close.end(), shown) == close.end()) close.push_back(shown);
    if (close.size() == 8) break;
  }
  return close;
}

std::string DidYouMean(const std::vector<std::string>& close) {
  return close.empty() ? std::string(" (sample-record --list-events shows all)")
                       : fmt::format("; did you mean: {}?", fmt::join(close, ", "));
}

std::string Abbreviated(const std::vector<std::string>& names, size_t limit) {
  if (names.size() <= limit) return fmt::format("{}", fmt::join(names, ", "));
  return fmt::format("{}, ... ({} in all)",
                     fmt::join(names.begin(), names.begin() + static_cast<ptrdiff_t>(limit), ", "),
                     names.size());
}

}  // namespace sample
