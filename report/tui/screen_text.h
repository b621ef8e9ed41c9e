// ScreenText: how many terminal columns text takes, and text cut to fit a
// width with an ellipsis, for the terminal browser's lines. UTF-8 text is
// measured per character with wcwidth (the locale's: 2 columns for CJK, 0
// for a combining mark); other text is a byte a column.
#pragma once

#include <cstddef>
#include <string>

namespace sample::report {

class ScreenText {
 public:
  // `utf8`: the terminal's locale is UTF-8 (the ellipsis is then one
  // character, "...", otherwise).
  explicit ScreenText(bool utf8) : utf8_(utf8), ellipsis_(utf8 ? "\u2026" : "...") {}

  size_t Columns(const std::string& text) const;
  // `text` cut to `width` terminal columns, an ellipsis marking the cut.
  std::string Fit(const std::string& text, size_t width) const;

 private:
  bool utf8_;
  std::string ellipsis_;
};

}  // namespace sample::report
