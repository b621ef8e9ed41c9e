#include "report/tui/screen_text.h"

#include <wchar.h>

#include <algorithm>
#include <cwchar>

#include "report/text/display_text.h"

namespace sample::report {
namespace {

// Terminal columns of one UTF-8 character, 1 where the locale cannot tell.
size_t CharColumns(const std::string& text, size_t at, size_t length) {
  std::mbstate_t state{};
  wchar_t wide = 0;
  if (std::mbrtowc(&wide, text.data() + at, length, &state) != length) return 1;
  const int width = wcwidth(wide);
  return width < 0 ? 1 : static_cast<size_t>(width);
}

}  // namespace

size_t ScreenText::Columns(const std::string& text) const {
  if (!utf8_) return text.size();
  size_t columns = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::max<size_t>(1, Utf8SequenceAt(text, i));
    columns += CharColumns(text, i, n);
    i += n;
  }
  return columns;
}

std::string ScreenText::Fit(const std::string& text, size_t width) const {
  if (Columns(text) <= width) return text;
  const size_t mark = Columns(ellipsis_);
  const size_t room = width > mark ? width - mark : 0;
  std::string out;
  size_t columns = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_ ? std::max<size_t>(1, Utf8SequenceAt(text, i)) : 1;
    const size_t w = utf8_ ? CharColumns(text, i, n) : 1;
    if (columns + w > room) break;
    out.append(text, i, n);
    columns += w;
    i += n;
  }
  return width >= mark ? out + ellipsis_ : out;
}

}  // namespace sample::report
