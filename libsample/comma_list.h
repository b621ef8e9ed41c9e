// Splits option values written as comma lists ("0,2-3", "comm,dso,sym",
// "12,34"). Empty parts are kept so that callers can reject "1,,2".
#pragma once

#include <string_view>
#include <vector>

namespace sample {

inline std::vector<std::string_view> SplitCommaList(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace sample
