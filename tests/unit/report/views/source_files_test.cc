// Tests for SourceFiles (source_files.h): lines by number, each file read
// once, paths that hold something other than a regular file (a FIFO
// would block a plain read, /dev/zero would never end) read as no lines,
// and lines only from files of the owners a function's binary vouches for.
#include "report/views/source_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/unit/temp_dir.h"

namespace sample::report {
namespace {

const SourceOwners kAny{.any = true, .uids = {}};

TEST(SourceFilesTest, LinesByNumberReadOnce) {
  testing::TempDir dir("source files");
  dir.Write("a.c", "int x;\n\nint f() {\r\n  return x;\n}");
  const std::string path = (dir.path() / "a.c").string();
  SourceFiles sources;
  EXPECT_EQ(sources.Line(path, 1, kAny), "int x;");
  EXPECT_EQ(sources.Line(path, 2, kAny), "");
  EXPECT_EQ(sources.Line(path, 3, kAny), "int f() {\r");  // as written
  EXPECT_EQ(sources.Line(path, 5, kAny), "}");            // no newline at the end
  EXPECT_EQ(sources.Line(path, 6, kAny), std::nullopt);
  EXPECT_EQ(sources.Line(path, 0, kAny), std::nullopt);
  EXPECT_EQ(sources.Line("", 1, kAny), std::nullopt);
  // Read once: a change after the first read is not seen.
  dir.Write("a.c", "changed\n");
  EXPECT_EQ(sources.Line(path, 1, kAny), "int x;");
}

TEST(SourceFilesTest, WhatIsNotARegularFileHasNoLines) {
  testing::TempDir dir("source files");
  const std::string fifo = (dir.path() / "fifo.c").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  SourceFiles sources;
  EXPECT_EQ(sources.Line(fifo, 1, kAny), std::nullopt);  // returns at once, never opened
  EXPECT_EQ(sources.Line("/dev/zero", 1, kAny), std::nullopt);
  EXPECT_EQ(sources.Line(dir.path().string(), 1, kAny), std::nullopt);  // a directory
  EXPECT_EQ(sources.Line((dir.path() / "missing.c").string(), 1, kAny), std::nullopt);
}

// SourceFiles hands out a line only from a file whose owner, as the
// descriptor read says, is one the function's binary vouches for.
TEST(SourceFilesTest, TheOwnerOfTheFileReadIsChecked) {
  testing::TempDir dir("source files");
  dir.Write("mine.c", "first\nsecond\n");
  const std::string mine = (dir.path() / "mine.c").string();
  const uid_t me = geteuid();
  const uid_t other = me == 65534 ? 65533 : 65534;
  SourceFiles sources;
  EXPECT_EQ(sources.Line(mine, 2, SourceOwners{.any = true, .uids = {}}), "second");
  EXPECT_EQ(sources.Line(mine, 1, SourceOwners{.any = false, .uids = {me}}), "first");
  EXPECT_EQ(sources.Line(mine, 1, SourceOwners{.any = false, .uids = {other}}), std::nullopt);
  EXPECT_EQ(sources.Line(mine, 1, SourceOwners{}), std::nullopt);
  // A link another user planted names a file of ours: its owner is ours,
  // not the link's.
  const std::string link = (dir.path() / "link.c").string();
  ASSERT_EQ(symlink(mine.c_str(), link.c_str()), 0);
  if (me == 0) ASSERT_EQ(lchown(link.c_str(), other, other), 0);
  EXPECT_EQ(sources.Line(link, 1, SourceOwners{.any = false, .uids = {other}}), std::nullopt);
  EXPECT_EQ(sources.Line(link, 1, SourceOwners{.any = false, .uids = {me}}), "first");
  if (me == 0) {
    dir.Write("theirs.c", "their line\n");
    const std::string theirs = (dir.path() / "theirs.c").string();
    ASSERT_EQ(chown(theirs.c_str(), other, other), 0);
    EXPECT_EQ(sources.Line(theirs, 1, SourceOwners{.any = false, .uids = {other}}), "their line");
    EXPECT_EQ(sources.Line(theirs, 1, SourceOwners{.any = false, .uids = {0}}), std::nullopt);
  }
}

}  // namespace
}  // namespace sample::report
