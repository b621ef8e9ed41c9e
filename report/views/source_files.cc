#include "report/views/source_files.h"

#include <sys/stat.h>

#include <span>

#include "libsample/regular_file.h"

namespace sample::report {

std::optional<std::string_view> SourceFiles::Line(const std::string& file, uint32_t line,
                                                  const SourceOwners& owners) {
  if (file.empty() || line == 0 || owners.none()) return std::nullopt;
  auto [it, added] = files_.try_emplace(file);
  Text& text = it->second;
  if (added) {
    // A path DWARF gives may hold anything (a FIFO, a device): read only a
    // regular file, and no more than a source file can honestly be. Its
    // owner is the one of the descriptor read, not of what a stat() of the
    // path saw a moment before.
    auto fd = OpenRegularFile(file);
    struct stat st {};
    if (fd && fstat(fd->get(), &st) == 0 && static_cast<uint64_t>(st.st_size) <= kMaxBytes) {
      text.owner = st.st_uid;
      text.bytes.resize(static_cast<size_t>(st.st_size));
      text.bytes.resize(PreadAll(fd->get(), std::as_writable_bytes(std::span(text.bytes)), 0));
    }
    std::string_view rest = text.bytes;
    while (!rest.empty() && text.lines.size() < kMaxLines) {
      const size_t end = rest.find('\n');
      text.lines.push_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
  }
  if (!text.owner || !owners.Allows(*text.owner) || line > text.lines.size()) return std::nullopt;
  return text.lines[line - 1];
}

}  // namespace sample::report
