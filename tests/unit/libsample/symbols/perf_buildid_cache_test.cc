// ReadBoundedFile and ReadPerfCachedFile: whole files read exactly, sized
// (a regular file) or not (/proc's), refused past the limit; a perf
// build-id cache entry found by name, build-id and file.
#include "libsample/symbols/perf_buildid_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/temp_dir.h"

namespace sample {
namespace {

using ::testing::HasSubstr;

std::string Pattern(size_t size) {
  std::string text;
  for (size_t i = 0; text.size() < size; ++i) text += "line " + std::to_string(i) + "\n";
  text.resize(size);
  return text;
}

// A regular file says its size: read in one piece, whatever its size.
TEST(ReadBoundedFileTest, ReadsWholeFilesExactlyUpToTheLimit) {
  testing::TempDir dir;
  for (size_t size : {size_t{0}, size_t{1}, size_t{65535}, size_t{65536}, size_t{200001}}) {
    const std::string text = Pattern(size);
    dir.Write("f", text);
    const std::string path = (dir.path() / "f").string();
    auto read = ReadBoundedFile(path, size);
    ASSERT_TRUE(read) << size << ": " << read.error().message;
    EXPECT_EQ(*read, text) << size;
    if (size == 0) continue;
    auto over = ReadBoundedFile(path, size - 1);
    ASSERT_FALSE(over) << size;
    EXPECT_THAT(over.error().message, HasSubstr("larger than " + std::to_string(size - 1)));
  }
  EXPECT_FALSE(ReadBoundedFile((dir.path() / "missing").string(), 100));
}

// /proc's files say size 0: read in growing pieces to their end.
TEST(ReadBoundedFileTest, ReadsFilesThatDoNotSayTheirSize) {
  auto read = ReadBoundedFile("/proc/self/maps", size_t{64} << 20);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_THAT(*read, HasSubstr("[stack]"));
  EXPECT_EQ(read->back(), '\n');
  auto kallsyms = ReadBoundedFile("/proc/kallsyms", size_t{64} << 20);
  if (!kallsyms) GTEST_SKIP() << "no /proc/kallsyms here";
  ASSERT_GT(kallsyms->size(), 100000u);  // past the first 64 KiB piece
  EXPECT_EQ(kallsyms->back(), '\n');
  auto small = ReadBoundedFile("/proc/kallsyms", 100000);
  ASSERT_FALSE(small);
  EXPECT_THAT(small.error().message, HasSubstr("larger than 100000"));
}

TEST(ReadPerfCachedFileTest, FindsTheEntryByNameBuildIdAndFile) {
  testing::TempDir dir;
  dir.Write("[kernel.kallsyms]/00ab/kallsyms", "ffffffff81000000 T _stext\n");
  auto read = ReadPerfCachedFile(dir.path().string(), "[kernel.kallsyms]", "00ab", "kallsyms", 100);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, "ffffffff81000000 T _stext\n");
  EXPECT_FALSE(ReadPerfCachedFile(dir.path().string(), "[kernel.kallsyms]", "../00ab", "kallsyms",
                                  100));
  EXPECT_FALSE(ReadPerfCachedFile("", "[kernel.kallsyms]", "00ab", "kallsyms", 100));
}

// The mapped copy: the same bytes, the same refusals, and the size bound.
TEST(ReadPerfCachedFileTest, MapsTheEntryWithTheSameChecks) {
  testing::TempDir dir;
  const std::string text = "ffffffff81000000 T _stext\n";
  dir.Write("[kernel.kallsyms]/00ab/kallsyms", text);
  auto mapped =
      MapPerfCachedFile(dir.path().string(), "[kernel.kallsyms]", "00ab", "kallsyms", 100);
  ASSERT_TRUE(mapped) << mapped.error().message;
  const std::span<const std::byte> bytes = mapped->bytes();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), text);
  EXPECT_FALSE(
      MapPerfCachedFile(dir.path().string(), "[kernel.kallsyms]", "../00ab", "kallsyms", 100));
  EXPECT_FALSE(MapPerfCachedFile("", "[kernel.kallsyms]", "00ab", "kallsyms", 100));
  auto over = MapPerfCachedFile(dir.path().string(), "[kernel.kallsyms]", "00ab", "kallsyms",
                                text.size() - 1);
  ASSERT_FALSE(over);
  EXPECT_THAT(over.error().message, HasSubstr("larger than " + std::to_string(text.size() - 1)));
  EXPECT_TRUE(
      MapPerfCachedFile(dir.path().string(), "[kernel.kallsyms]", "00ab", "kallsyms", text.size()));
}

}  // namespace
}  // namespace sample
