// Strings from a recording (command names, paths, host facts, symbol names
// of binaries we did not build) made safe to show. Text output goes to
// terminals: an escape sequence in a command name could move the cursor,
// rewrite lines or set the window title, and a carriage return could hide
// what came before it. JSON must stay valid for any bytes.
//
// The rule, for text and JSON alike: valid UTF-8 passes unchanged; a byte
// that is a control character (C0 but for the line feeds and tabs of a whole
// report, DEL, and the C1 controls U+0080-U+009F) or not part of valid UTF-8 (a stray
// continuation byte, a truncated or overlong sequence, a surrogate, above
// U+10FFFF) is shown as the four characters \xNN. In JSON strings the
// backslash of that form is itself escaped ("caf\\xe9"), and the C0 controls
// keep their standard \uNNNN escapes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sample::report {

// The length of the valid UTF-8 sequence at text[i] (1 for ASCII), or 0
// when the byte there does not start one.
size_t Utf8SequenceAt(std::string_view text, size_t i);

// `text` with control characters and invalid UTF-8 shown as \xNN; line
// feeds and tabs are kept when `keep_newlines` (a whole report), escaped
// otherwise (one line: a warning, a name). One pass; text with nothing to
// escape, the common case, is copied as it is.
std::string ShowableText(std::string_view text, bool keep_newlines);

// A name or fact from a file as one line of a text view, without the tabs
// and line feeds that would break its row: ShowableText(text, false).
inline std::string OneLine(std::string_view text) { return ShowableText(text, false); }

// The terminal columns valid UTF-8 text takes: one for each character
// (combining and double-width characters are not told apart). Bytes that
// are not valid UTF-8 count one each.
size_t DisplayWidth(std::string_view text);

}  // namespace sample::report
