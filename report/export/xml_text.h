// XmlText: text made safe to place inside an XML (SVG, XHTML) element or a
// quoted attribute. Names come from binaries and recordings we did not
// write, so besides the five reserved characters this replaces what no XML
// 1.0 document may hold: control characters (other than tab and line
// breaks) and bytes that are not valid UTF-8 become U+FFFD.
#pragma once

#include <string>
#include <string_view>

namespace sample::report {

// `text` escaped for an element's content or a "..." / '...' attribute.
std::string XmlEscape(std::string_view text);

// The first `max_chars` characters of valid UTF-8 `text` (never cutting a
// character in two).
std::string_view Utf8Prefix(std::string_view text, size_t max_chars);

// Characters (not bytes) in valid UTF-8 `text`.
size_t Utf8Length(std::string_view text);

}  // namespace sample::report
