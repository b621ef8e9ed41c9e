// Helpers shared by the symbolizer, debug file finder and debuginfod tests:
// source lines found by marker, a scratch directory, file copies, and the
// frames of a BinarySymbolizer lookup in a form gtest prints readably.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "libsample/symbols/binary_symbolizer.h"

namespace sample::testing {

// The 1-based number of the only line of `path` containing `marker`; 0 (and
// a test failure) if there is not exactly one.
inline uint32_t LineOf(const std::string& path, std::string_view marker) {
  std::ifstream in(path);
  std::string line;
  uint32_t number = 0;
  uint32_t found = 0;
  int hits = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find(marker) != std::string::npos) {
      found = number;
      ++hits;
    }
  }
  EXPECT_EQ(hits, 1) << marker << " in " << path;
  return hits == 1 ? found : 0;
}

// A frame as "name [inlined] file:line" with the path normalised (DWARF
// keeps the compiler's "build/../tests/..." spelling).
inline std::string Describe(const SymbolFrame& frame) {
  std::string file =
      frame.file.empty() ? "" : std::filesystem::path(frame.file).lexically_normal().string();
  return fmt::format("{}{} {}:{}", frame.function, frame.inlined ? " (inlined)" : "", file,
                     frame.line);
}

inline std::vector<std::string> Describe(const std::vector<SymbolFrame>& frames) {
  std::vector<std::string> out;
  for (const SymbolFrame& frame : frames) out.push_back(Describe(frame));
  return out;
}

// Expected Describe() output for a frame of `source`.
inline std::string Expect(std::string_view function, bool inlined, const std::string& source,
                          uint32_t line) {
  return fmt::format("{}{} {}:{}", function, inlined ? " (inlined)" : "",
                     std::filesystem::path(source).lexically_normal().string(), line);
}

// A fresh directory under $TMPDIR, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sample-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }

  const std::string& path() const { return path_; }
  std::string operator/(std::string_view relative) const {
    return path_ + "/" + std::string(relative);
  }

 private:
  std::string path_;
};

// Copies `from` to `to`, creating `to`'s directory.
inline void CopyTo(const std::string& from, const std::string& to) {
  std::filesystem::create_directories(std::filesystem::path(to).parent_path());
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

}  // namespace sample::testing
