#include "report/views/source_files.h"

#include "libsample/symbols/perf_buildid_cache.h"

namespace sample::report {

std::optional<std::string_view> SourceFiles::Line(const std::string& file, uint32_t line) {
  if (file.empty() || line == 0) return std::nullopt;
  auto [it, added] = files_.try_emplace(file);
  Text& text = it->second;
  if (added) {
    // A path DWARF gives may hold anything (a FIFO, a device): read only a
    // regular file, and no more than a source file can honestly be.
    auto read = ReadBoundedFile(file, kMaxBytes);
    if (read) text.bytes = std::move(*read);
    std::string_view rest = text.bytes;
    while (!rest.empty() && text.lines.size() < kMaxLines) {
      const size_t end = rest.find('\n');
      text.lines.push_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
  }
  if (line > text.lines.size()) return std::nullopt;
  return text.lines[line - 1];
}

}  // namespace sample::report
