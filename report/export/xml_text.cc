#include "report/export/xml_text.h"

#include <cstdint>

namespace sample::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Bytes of the valid UTF-8 character at the start of `s`; 0 when invalid
// (overlong forms, surrogates and values past U+10FFFF included).
size_t ValidCharLength(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t value = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2, value = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, value = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, value = c & 0x07;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (b(i) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kMin[n] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  // U+FFFE and U+FFFF are not XML characters either.
  if (value == 0xFFFE || value == 0xFFFF) return 0;
  return n;
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t n = ValidCharLength(text);
    if (n == 0) {
      out += kReplacement;
      text.remove_prefix(1);
      continue;
    }
    const char c = text[0];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (n == 1 && static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += kReplacement;
        } else {
          out.append(text.substr(0, n));
        }
    }
    text.remove_prefix(n);
  }
  return out;
}

std::string_view Utf8Prefix(std::string_view text, size_t max_chars) {
  size_t at = 0;
  for (size_t chars = 0; at < text.size() && chars < max_chars; ++chars) {
    ++at;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  }
  return text.substr(0, at);
}

size_t Utf8Length(std::string_view text) {
  size_t chars = 0;
  for (char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return chars;
}

}  // namespace sample::report
