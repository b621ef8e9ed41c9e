// SourceFiles: the lines of the source files DWARF names, for the annotate
// view's printers (text_annotate.cc, the HTML page's annotation). Each file
// is read once, on first use, as a file we did not write (a recording names
// it): only a regular file, at most kMaxBytes and kMaxLines; a file that
// cannot be read has no lines. Owns the files' text.
//
// Which paths may be read is the view's decision, not this reader's: the
// printers ask only for the files of a function whose source files come
// from a binary found here with the recorded build-id
// (AnnotatedFunction::source_readable), never for a path a recording's own
// tables name, which could be any file of the machine the report runs on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sample::report {

class SourceFiles {
 public:
  // Bounds on one file: a source file of a million lines is a generated one.
  static constexpr size_t kMaxBytes = size_t{64} << 20;
  static constexpr size_t kMaxLines = 1000000;

  // The text of `line` (1-based) of `file`, without its newline; nullopt
  // when the file cannot be read or has no such line. Valid while this
  // object lives.
  std::optional<std::string_view> Line(const std::string& file, uint32_t line);

 private:
  struct Text {
    std::string bytes;
    std::vector<std::string_view> lines;
  };
  std::map<std::string, Text> files_;
};

}  // namespace sample::report
