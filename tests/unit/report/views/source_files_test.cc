// Tests for SourceFiles (source_files.h): lines by number, each file read
// once, and paths that hold something other than a regular file (a FIFO
// would block a plain read, /dev/zero would never end) read as no lines.
#include "report/views/source_files.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/unit/temp_dir.h"

namespace sample::report {
namespace {

TEST(SourceFilesTest, LinesByNumberReadOnce) {
  testing::TempDir dir("source files");
  dir.Write("a.c", "int x;\n\nint f() {\r\n  return x;\n}");
  const std::string path = (dir.path() / "a.c").string();
  SourceFiles sources;
  EXPECT_EQ(sources.Line(path, 1), "int x;");
  EXPECT_EQ(sources.Line(path, 2), "");
  EXPECT_EQ(sources.Line(path, 3), "int f() {\r");  // as written
  EXPECT_EQ(sources.Line(path, 5), "}");            // no newline at the end
  EXPECT_EQ(sources.Line(path, 6), std::nullopt);
  EXPECT_EQ(sources.Line(path, 0), std::nullopt);
  EXPECT_EQ(sources.Line("", 1), std::nullopt);
  // Read once: a change after the first read is not seen.
  dir.Write("a.c", "changed\n");
  EXPECT_EQ(sources.Line(path, 1), "int x;");
}

TEST(SourceFilesTest, WhatIsNotARegularFileHasNoLines) {
  testing::TempDir dir("source files");
  const std::string fifo = (dir.path() / "fifo.c").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  SourceFiles sources;
  EXPECT_EQ(sources.Line(fifo, 1), std::nullopt);  // returns at once, never opened
  EXPECT_EQ(sources.Line("/dev/zero", 1), std::nullopt);
  EXPECT_EQ(sources.Line(dir.path().string(), 1), std::nullopt);  // a directory
  EXPECT_EQ(sources.Line((dir.path() / "missing.c").string(), 1), std::nullopt);
}

}  // namespace
}  // namespace sample::report
