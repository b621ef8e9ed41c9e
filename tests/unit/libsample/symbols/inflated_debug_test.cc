#include "libsample/symbols/inflated_debug.h"

#include <gelf.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "libsample/symbols/address_frames.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"
#include "tests/unit/temp_dir.h"

namespace sample {
namespace {

bool AnyCompressed(const std::string& path) {
  auto file = ElfFile::Open(path);
  if (!file) return true;
  for (Elf_Scn* scn = elf_nextscn(file->get(), nullptr); scn != nullptr;
       scn = elf_nextscn(file->get(), scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) != nullptr && (shdr.sh_flags & SHF_COMPRESSED) != 0) return true;
  }
  return false;
}

// XDG_CACHE_HOME pointed at a directory of the test's for its lifetime.
class CacheHome {
 public:
  explicit CacheHome(const std::string& dir) {
    if (const char* old = getenv("XDG_CACHE_HOME")) old_ = old;
    setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  }
  ~CacheHome() {
    if (old_.empty()) {
      unsetenv("XDG_CACHE_HOME");
    } else {
      setenv("XDG_CACHE_HOME", old_.c_str(), 1);
    }
  }

 private:
  std::string old_;
};

TEST(InflatedDebugTest, ACompressedDebugFileIsCachedInflatedAndNamesTheSame) {
  testing::TempDir dir;
  CacheHome home(dir.path().string());
  const std::string compressed = FIXTURE_PROG_DEBUG_GZ_PATH;
  ASSERT_TRUE(AnyCompressed(compressed));
  const std::string build_id = ReadElfBuildId(compressed).value_or("");
  ASSERT_FALSE(build_id.empty());

  const std::string inflated = InflatedDebugFile(compressed, build_id);
  EXPECT_EQ(inflated, dir.path().string() + "/sample/debug/" + build_id + ".debug");
  EXPECT_FALSE(AnyCompressed(inflated));
  EXPECT_EQ(ReadElfBuildId(inflated).value_or(""), build_id);
  // Again: the copy is taken as it is.
  EXPECT_EQ(InflatedDebugFile(compressed, build_id), inflated);

  auto with_compressed = BinarySymbolizer::Open(FIXTURE_PROG_DEBUG_PATH, compressed);
  auto with_inflated = BinarySymbolizer::Open(FIXTURE_PROG_DEBUG_PATH, inflated);
  ASSERT_TRUE(with_compressed) << with_compressed.error().message;
  ASSERT_TRUE(with_inflated) << with_inflated.error().message;
  size_t named = 0;
  for (const ElfSymbol& symbol : with_compressed->elf_symbols().symbols()) {
    const auto offset = with_compressed->elf_symbols().VaddrToFileOffset(symbol.start);
    if (!offset) continue;
    const auto a = FramesAtFileOffset(*with_compressed, *offset, "prog");
    EXPECT_EQ(a, FramesAtFileOffset(*with_inflated, *offset, "prog")) << symbol.name();
    named += !a.front().name.empty();
  }
  EXPECT_GT(named, 3u);
}

TEST(InflatedDebugTest, FilesWithoutCompressionAndBadBuildIdsAreLeftAsTheyAre) {
  testing::TempDir dir;
  CacheHome home(dir.path().string());
  const std::string plain = FIXTURE_PROG_DEBUG_PATH;
  const std::string build_id = ReadElfBuildId(plain).value_or("");
  EXPECT_EQ(InflatedDebugFile(plain, build_id), plain);
  const std::string compressed = FIXTURE_PROG_DEBUG_GZ_PATH;
  EXPECT_EQ(InflatedDebugFile(compressed, "../../etc/passwd"), compressed);
  EXPECT_EQ(InflatedDebugFile(compressed, ""), compressed);
  EXPECT_EQ(InflatedDebugFile("", build_id), "");
}

TEST(InflatedDebugTest, ACachedCopyOfAnotherBuildIsReplaced) {
  testing::TempDir dir;
  CacheHome home(dir.path().string());
  const std::string compressed = FIXTURE_PROG_DEBUG_GZ_PATH;
  const std::string build_id = ReadElfBuildId(compressed).value_or("");
  const std::string first = InflatedDebugFile(compressed, build_id);
  ASSERT_NE(first, compressed);
  // Someone else's file under the name: another build's debug file.
  std::filesystem::copy_file(FIXTURE_LIB_PATH, first,
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_NE(ReadElfBuildId(first).value_or(""), build_id);
  EXPECT_EQ(InflatedDebugFile(compressed, build_id), first);
  EXPECT_EQ(ReadElfBuildId(first).value_or(""), build_id);
}

}  // namespace
}  // namespace sample
