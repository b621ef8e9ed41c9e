// SourceFiles: the lines of the source files DWARF names, for the annotate
// view's printers (text_annotate.cc, the HTML page's annotation). Each file
// is read once, on first use, as a file we did not write (a recording names
// it): only a regular file, at most kMaxBytes and kMaxLines; a file that
// cannot be read has no lines. Owns the files' text and their owners.
//
// Which paths may be read is the view's decision, given here as the owners
// a function's binary vouches for (AnnotatedFunction::source_owners,
// report/views/source_owners.h): a line is handed out only from a file
// whose owner, as fstat() gives it on the descriptor read, is one of them
// (a path can be swapped for a link to another file at any time). A
// recording's own tables vouch for no owner: what they name is never shown.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/views/source_owners.h"

namespace sample::report {

class SourceFiles {
 public:
  // Bounds on one file: a source file of a million lines is a generated one.
  static constexpr size_t kMaxBytes = size_t{64} << 20;
  static constexpr size_t kMaxLines = 1000000;

  // The text of `line` (1-based) of `file`, without its newline; nullopt
  // when the file cannot be read, is owned by none of `owners` or has no
  // such line. Valid while this object lives.
  std::optional<std::string_view> Line(const std::string& file, uint32_t line,
                                       const SourceOwners& owners);

 private:
  struct Text {
    std::optional<uid_t> owner;  // of the file read; none when unreadable
    std::string bytes;
    std::vector<std::string_view> lines;
  };
  std::map<std::string, Text> files_;
};

}  // namespace sample::report
