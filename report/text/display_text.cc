#include "report/text/display_text.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

namespace sample::report {

size_t Utf8SequenceAt(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint32_t code = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;  // a continuation byte, or a lead of an overlong or too large form
  }
  if (text.size() - i < length) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  // Overlong forms, UTF-16 surrogates, beyond U+10FFFF.
  if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000) ||
      (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) {
    return 0;
  }
  return length;
}

namespace {

// Whether the character at text[i] (a valid sequence of `length` bytes) is
// shown escaped.
bool IsControl(std::string_view text, size_t i, size_t length, bool keep_newlines) {
  const auto lead = static_cast<uint8_t>(text[i]);
  if (length == 1) {
    if (lead == '\n' || lead == '\t') return !keep_newlines;
    return (lead < 0x20 && lead != '\t') || lead == 0x7f;
  }
  // C1 controls: U+0080-U+009F, encoded C2 80 - C2 9F.
  return length == 2 && lead == 0xc2 && static_cast<uint8_t>(text[i + 1]) < 0xa0;
}

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size();) {
    i += std::max<size_t>(Utf8SequenceAt(text, i), 1);
    ++width;
  }
  return width;
}

std::string ShowableText(std::string_view text, bool keep_newlines) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t length = Utf8SequenceAt(text, i);
    if (length == 0 || IsControl(text, i, length, keep_newlines)) break;
    i += length;
  }
  if (i == text.size()) return std::string(text);
  std::string out(text.substr(0, i));
  while (i < text.size()) {
    const size_t length = Utf8SequenceAt(text, i);
    if (length == 0 || IsControl(text, i, length, keep_newlines)) {
      // A C1 control is two bytes: each is shown.
      const size_t shown = length == 0 ? 1 : length;
      for (size_t k = 0; k < shown; ++k) {
        out += fmt::format("\\x{:02x}", static_cast<uint8_t>(text[i + k]));
      }
      i += shown;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

}  // namespace sample::report
