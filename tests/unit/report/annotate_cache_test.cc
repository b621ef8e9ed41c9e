#include "report/annotate_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <utility>

#include "libsample/crc32.h"
#include "tests/unit/temp_dir.h"

namespace sample::report {
namespace {

CachedAnnotate Example() {
  CachedAnnotate cached;
  cached.warnings = {"3 samples lost", "no debug info for /bin/x"};
  cached.binaries = {{"/bin/x", "abcd", "recorded path", "/bin/x 1:2 3 | - "},
                     {"[kernel.kallsyms]", "", "none: not found", " - |  - "}};
  cached.embedded = {{"/bin/y", "ef01"}};
  AnnotateIndex& index = cached.index;
  index.event = "cpu-clock";
  index.event_samples = 1234;
  index.dsos = {{"/bin/x", "abcd", false}, {"[kernel.kallsyms]", "", false}};
  index.functions = {
      {.function = 7,
       .name = "twice",
       .short_name = "twice",
       .signature = "twice(int)",
       .dso = 0,
       .some_offset = 0x1010,
       .samples = 5,
       .period = 5000,
       .by_offset = {{0x1010, 3, 3000}, {0x1014, 2, 2000}}},
      {.function = 2,
       .name = "do_syscall_64",
       .dso = 1,
       .kernel = true,
       .some_offset = FrameAddress::kNoOffset,
       .samples = 1,
       .period = 1000,
       .by_offset = {{FrameAddress::kNoOffset, 1, 1000}}},
  };
  return cached;
}

std::span<const std::byte> Bytes(const std::string& s) { return std::as_bytes(std::span(s)); }

TEST(AnnotateCacheTest, DecodesWhatItEncodes) {
  const std::string bytes = EncodeCachedAnnotate("key", Example());
  auto decoded = DecodeCachedAnnotate(Bytes(bytes), "key");
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, Example());
  // An empty index (no event with samples) too.
  const std::string empty = EncodeCachedAnnotate("key", CachedAnnotate{});
  ASSERT_TRUE(DecodeCachedAnnotate(Bytes(empty), "key"));
  EXPECT_EQ(*DecodeCachedAnnotate(Bytes(empty), "key"), CachedAnnotate{});
}

TEST(AnnotateCacheTest, RefusesAnotherKeyAndEveryDamage) {
  const std::string bytes = EncodeCachedAnnotate("key", Example());
  EXPECT_FALSE(DecodeCachedAnnotate(Bytes(bytes), "other key"));
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_FALSE(DecodeCachedAnnotate(Bytes(bytes.substr(0, size)), "key")) << size;
  }
  EXPECT_FALSE(DecodeCachedAnnotate(Bytes(bytes + "x"), "key"));
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x40);
    EXPECT_FALSE(DecodeCachedAnnotate(Bytes(damaged), "key")) << at;
  }
}

// What the checksum cannot catch (a file written so): every count, index
// and order is checked too.
TEST(AnnotateCacheTest, RefusesAFileWhoseChecksumIsRightButContentsAreNot) {
  CachedAnnotate bad_dso = Example();
  bad_dso.index.functions[1].dso = 2;  // of 2 DSOs
  EXPECT_FALSE(DecodeCachedAnnotate(Bytes(EncodeCachedAnnotate("key", bad_dso)), "key"));
  CachedAnnotate unordered = Example();
  std::swap(unordered.index.functions[0].by_offset[0], unordered.index.functions[0].by_offset[1]);
  EXPECT_FALSE(DecodeCachedAnnotate(Bytes(EncodeCachedAnnotate("key", unordered)), "key"));
  // The count of warnings (right after the key) made huge, the checksum
  // made again.
  std::string bytes = EncodeCachedAnnotate("key", Example());
  const uint32_t huge = 0x7fffffff;
  std::memcpy(bytes.data() + 12 + 4 + 3, &huge, sizeof(huge));
  const uint32_t crc = Crc32(std::as_bytes(std::span(bytes).subspan(12)));
  std::memcpy(bytes.data() + 8, &crc, sizeof(crc));
  EXPECT_FALSE(DecodeCachedAnnotate(Bytes(bytes), "key"));
}

// Stand-ins for the recording's embedded binaries make the locator say
// "embedded" where the load did (and look for nothing on debuginfod).
TEST(AnnotateCacheTest, StandInsAreFoundWhereEmbeddedBinariesWere) {
  const EmbeddedBinaries stand_ins = EmbeddedStandIns({{"/nonexistent/y", "ef01"}});
  BinaryLocatorOptions options;
  options.files.use_debuginfod = false;
  BinaryLocator locator(options, RecordedCode{{}, &stand_ins});
  const LocatedBinary found = locator.Locate("/nonexistent/y", "ef01");
  ASSERT_NE(found.embedded, nullptr);
  EXPECT_TRUE(found.embedded->code.empty());
  EXPECT_EQ(found.source, "embedded");
  EXPECT_EQ(locator.Locate("/nonexistent/z", "ef01").embedded, nullptr);
}

TEST(AnnotateCacheTest, ReadsWhatItWroteAndKeepsTheRecentlyUsed) {
  testing::TempDir temp;
  const std::string dir = (temp.path() / "annotate").string();
  EXPECT_FALSE(ReadAnnotateCache(dir, "a"));
  WriteAnnotateCache(dir, "a", Example(), 2);
  auto read = ReadAnnotateCache(dir, "a");
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, Example());
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // "a" written first but read since: "b" is the least recently used
  // when "c" makes three.
  WriteAnnotateCache(dir, "b", Example(), 2);
  const timespec old[2] = {{1, 0}, {1, 0}};
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    utimensat(AT_FDCWD, entry.path().c_str(), old, 0);
  }
  ASSERT_TRUE(ReadAnnotateCache(dir, "a"));
  WriteAnnotateCache(dir, "c", Example(), 2);
  EXPECT_TRUE(ReadAnnotateCache(dir, "a"));
  EXPECT_FALSE(ReadAnnotateCache(dir, "b"));
  EXPECT_TRUE(ReadAnnotateCache(dir, "c"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 2);
}

TEST(AnnotateCacheTest, ADamagedFileIsAbsentAndReplaced) {
  testing::TempDir temp;
  const std::string dir = (temp.path() / "annotate").string();
  WriteAnnotateCache(dir, "a", Example());
  const auto file = std::filesystem::directory_iterator(dir)->path();
  std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
  EXPECT_FALSE(ReadAnnotateCache(dir, "a"));
  WriteAnnotateCache(dir, "a", Example());
  EXPECT_TRUE(ReadAnnotateCache(dir, "a"));
}

TEST(AnnotateCacheTest, KeyChangesWithTheInputAndTheOptions) {
  testing::TempDir temp;
  const std::string input = (temp.path() / "sample.data").string();
  EXPECT_EQ(AnnotateCacheKey("options\n", {input}), "");  // no such file
  temp.Write("sample.data", "one");
  const std::string key = AnnotateCacheKey("options\n", {input});
  ASSERT_NE(key, "");
  EXPECT_EQ(AnnotateCacheKey("options\n", {input}), key);
  EXPECT_NE(AnnotateCacheKey(AnnotateCacheOptions({{"pid", {"1"}}}), {input}), key);
  // Values cannot run into each other.
  EXPECT_NE(AnnotateCacheOptions({{"comm", {"a 1:b"}}}),
            AnnotateCacheOptions({{"comm", {"a", "b"}}}));
  // The view's own options are not part of it.
  EXPECT_EQ(AnnotateCacheOptions({{"annotate", {"f"}}, {"format", {"json"}}, {"jobs", {"1"}}}),
            AnnotateCacheOptions({}));
  temp.Write("sample.data", "two!");
  EXPECT_NE(AnnotateCacheKey("options\n", {input}), key);
}

TEST(AnnotateCacheTest, FingerprintChangesWithTheBinary) {
  testing::TempDir temp;
  const std::string bin = (temp.path() / "bin").string();
  std::filesystem::copy_file("/bin/true", bin);
  BinaryLocatorOptions options;
  options.files.use_debuginfod = false;
  const auto before = FingerprintBinaries({{bin, ""}}, options, {});
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(FingerprintBinaries({{bin, ""}}, options, {}), before);
  EXPECT_NE(before[0].found.find(bin), std::string::npos) << before[0].found;
  // Rebuilt (here: touched).
  std::filesystem::last_write_time(bin,
                                   std::filesystem::last_write_time(bin) + std::chrono::seconds(5));
  const auto touched = FingerprintBinaries({{bin, ""}}, options, {});
  EXPECT_NE(touched, before);
  std::filesystem::remove(bin);
  EXPECT_NE(FingerprintBinaries({{bin, ""}}, options, {}), touched);
}

}  // namespace
}  // namespace sample::report
