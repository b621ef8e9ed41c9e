// Tests for the kernel symbol snapshot (the recorder's, sample-top's, a
// perf.data report's on its recording host): selection from a
// kallsyms file and the per-boot cache (when it is used, when it must not be).
#include "libsample/symbols/kallsyms_snapshot.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "libsample/symbols/kallsyms.h"
#include "tests/unit/temp_dir.h"

namespace sample {
namespace {

using sample::testing::TempDir;

constexpr std::string_view kKallsyms =
    "0000000000000000 A fixed_percpu_data\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81000100 t core_a\n"
    "ffffffff81000200 T core_b\n"
    "ffffffff81000300 T _etext\n"
    "ffffffffc0000000 t mod_fn\t[mymod]\n"
    "ffffffffc0000100 t mod_end\t[mymod]\n";

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class KallsymsSnapshotTest : public ::testing::Test {
 protected:
  KallsymsSnapshotTest() : dir_("kallsyms_snapshot_test") {
    dir_.Write("kallsyms", kKallsyms);
    options_.kallsyms_path = (dir_.path() / "kallsyms").string();
    options_.cache_dir = (dir_.path() / "cache/sample").string();
    options_.boot_id = "0123abcd-boot";
  }
  std::filesystem::path CacheFile() const {
    return std::filesystem::path(options_.cache_dir) / ("sorted-kallsyms-" + options_.boot_id);
  }
  // Replaces the "kernel's" table, so a read of it is told from a cache hit.
  void ChangeKernelTable() const {
    dir_.Write("kallsyms",
               "ffffffff81000000 T _stext\nffffffff81000100 t renamed_a\n"
               "ffffffff81000200 T renamed_b\nffffffff81000300 T _etext\n"
               "ffffffffc0000000 t new_mod_fn\t[mymod]\nffffffffc0000100 t mod_end\t[mymod]\n");
  }

  TempDir dir_;
  KallsymsSnapshotOptions options_;
};

TEST_F(KallsymsSnapshotTest, SelectsCoveringSymbolsAndWritesAPrivateCache) {
  const auto snapshot = TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  EXPECT_FALSE(snapshot.from_cache);
  ASSERT_EQ(snapshot.symbols.size(), 2u);
  EXPECT_EQ(snapshot.symbols[0].name, "core_a");
  EXPECT_EQ(snapshot.symbols[1].name, "core_b");
  struct stat st {};
  ASSERT_EQ(stat(CacheFile().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(options_.cache_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(KallsymsSnapshotTest, CoreAddressesComeFromTheCache) {
  (void)TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  ChangeKernelTable();
  const auto snapshot = TakeKallsymsSnapshot({0xffffffff81000250u}, options_);
  EXPECT_TRUE(snapshot.from_cache);
  ASSERT_EQ(snapshot.symbols.size(), 2u);
  EXPECT_EQ(snapshot.symbols[0].name, "core_b");
}

TEST_F(KallsymsSnapshotTest, AModuleAddressRereadsTheKernelTable) {
  (void)TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  ChangeKernelTable();
  const auto snapshot = TakeKallsymsSnapshot({0xffffffff81000150u, 0xffffffffc0000010u}, options_);
  EXPECT_FALSE(snapshot.from_cache);
  ASSERT_EQ(snapshot.symbols.size(), 4u);
  EXPECT_EQ(snapshot.symbols[0].name, "renamed_a");
  EXPECT_EQ(snapshot.symbols[2].name, "new_mod_fn");
  // ... and refreshes the cache.
  const auto again = TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.symbols[0].name, "renamed_a");
}

TEST_F(KallsymsSnapshotTest, AnotherBootsCacheIsNotUsedAndIsRemoved) {
  (void)TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  const auto old_cache = CacheFile();
  ChangeKernelTable();
  options_.boot_id = "4567-next-boot";
  const auto snapshot = TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  EXPECT_FALSE(snapshot.from_cache);
  EXPECT_EQ(snapshot.symbols[0].name, "renamed_a");
  EXPECT_FALSE(std::filesystem::exists(old_cache));
  EXPECT_TRUE(std::filesystem::exists(CacheFile()));
}

TEST_F(KallsymsSnapshotTest, ACacheOthersCanWriteIsIgnored) {
  (void)TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  ChangeKernelTable();
  ASSERT_EQ(chmod(CacheFile().c_str(), 0666), 0);
  EXPECT_FALSE(TakeKallsymsSnapshot({0xffffffff81000150u}, options_).from_cache);
}

TEST_F(KallsymsSnapshotTest, ASymlinkedCacheIsIgnored) {
  (void)TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  ChangeKernelTable();
  const auto moved = CacheFile().string() + ".real";
  std::filesystem::rename(CacheFile(), moved);
  std::filesystem::create_symlink(moved, CacheFile());
  EXPECT_FALSE(TakeKallsymsSnapshot({0xffffffff81000150u}, options_).from_cache);
}

TEST_F(KallsymsSnapshotTest, HiddenAddressesGiveANote) {
  dir_.Write("kallsyms", "0000000000000000 T _stext\n0000000000000000 t foo\n");
  const auto snapshot = TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  EXPECT_TRUE(snapshot.symbols.empty());
  EXPECT_NE(snapshot.note.find("kptr_restrict"), std::string::npos) << snapshot.note;
  EXPECT_FALSE(std::filesystem::exists(CacheFile()));
}

TEST_F(KallsymsSnapshotTest, AnUnreadableTableGivesANote) {
  options_.kallsyms_path = (dir_.path() / "missing").string();
  const auto snapshot = TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  EXPECT_TRUE(snapshot.symbols.empty());
  EXPECT_NE(snapshot.note.find("cannot read"), std::string::npos) << snapshot.note;
}

TEST_F(KallsymsSnapshotTest, AFeedMapsTheCacheOnceAndKeepsWhatItRead) {
  (void)TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  KallsymsFeed feed(options_);
  const auto core = feed.Select({0xffffffff81000150u});
  EXPECT_TRUE(core.from_cache);
  EXPECT_EQ(core.symbols[0].name, "core_a");
  ChangeKernelTable();
  // A module address reads the kernel's table; later ones use what it read,
  // the new module name included.
  const auto module = feed.Select({0xffffffffc0000010u});
  EXPECT_FALSE(module.from_cache);
  ASSERT_EQ(module.symbols.size(), 2u);
  EXPECT_EQ(module.symbols[0].name, "new_mod_fn");
  dir_.Write("kallsyms", kKallsyms);
  const auto kept = feed.Select({0xffffffffc0000020u, 0xffffffff81000250u});
  ASSERT_EQ(kept.symbols.size(), 4u);
  EXPECT_EQ(kept.symbols[0].name, "renamed_b");
  EXPECT_EQ(kept.symbols[2].name, "new_mod_fn");
  // Core addresses come from the cache mapped at the start, whatever the
  // reads since.
  EXPECT_TRUE(feed.Select({0xffffffff81000150u}).from_cache);
  EXPECT_EQ(feed.Select({0xffffffff81000150u}).symbols[0].name, "core_a");
}

TEST_F(KallsymsSnapshotTest, AFeedRereadsAnOldTable) {
  options_.reread_seconds = 0;
  KallsymsFeed feed(options_);
  EXPECT_EQ(feed.Select({0xffffffffc0000010u}).symbols[0].name, "mod_fn");
  ChangeKernelTable();
  EXPECT_EQ(feed.Select({0xffffffffc0000010u}).symbols[0].name, "new_mod_fn");
}

TEST_F(KallsymsSnapshotTest, NoCacheDirectoryMeansNoCache) {
  options_.cache_dir.clear();
  (void)TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  ChangeKernelTable();
  EXPECT_FALSE(TakeKallsymsSnapshot({0xffffffff81000150u}, options_).from_cache);
}

TEST_F(KallsymsSnapshotTest, TheCacheHoldsTheSortedTextSymbols) {
  (void)TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  const std::string cache = ReadFile(CacheFile());
  const size_t eol = cache.find('\n');
  ASSERT_NE(eol, std::string::npos);
  EXPECT_EQ(cache.substr(0, eol),
            "sample-kallsyms-cache v2 0123abcd-boot ffffffff81000000 ffffffff81000300");
  EXPECT_EQ(cache.substr(eol + 1), SortKallsyms(kKallsyms));
}

TEST_F(KallsymsSnapshotTest, ACorruptCacheMeansAFreshRead) {
  (void)TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  ChangeKernelTable();
  std::string cache = ReadFile(CacheFile());
  cache.replace(cache.find("core_a"), 6, "\n\n\n\n\n\n");
  dir_.Write(CacheFile(), cache);
  ASSERT_EQ(chmod(CacheFile().c_str(), 0600), 0);
  const auto snapshot = TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  EXPECT_FALSE(snapshot.from_cache);
  ASSERT_EQ(snapshot.symbols.size(), 2u);
  EXPECT_EQ(snapshot.symbols[0].name, "renamed_a");
}

TEST_F(KallsymsSnapshotTest, CachesOfTheUnsortedFormatAreRemoved) {
  const auto old_format =
      std::filesystem::path(options_.cache_dir) / ("kallsyms-" + options_.boot_id);
  std::filesystem::create_directories(options_.cache_dir);
  dir_.Write(old_format, std::string("sample-kallsyms-cache v1 0123abcd-boot 0 1\n"));
  const auto snapshot = TakeKallsymsSnapshot({0xffffffff81000150u}, options_);
  EXPECT_FALSE(snapshot.from_cache);
  EXPECT_FALSE(std::filesystem::exists(old_format));
  EXPECT_TRUE(std::filesystem::exists(CacheFile()));
}

}  // namespace
}  // namespace sample
