#include "libsample/symbols/inflated_debug.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "libsample/symbols/address_frames.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/unique_fd.h"
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

// An ELF file whose one section, .debug_info, is `inflated` zero bytes
// zlib-compressed (SHF_COMPRESSED): about a thousandth of that on disk.
void WriteZlibBomb(const std::string& path, size_t inflated) {
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd.valid());
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd.get(), ELF_C_WRITE, nullptr);
  ASSERT_NE(elf, nullptr);
  Elf64_Ehdr* ehdr = elf64_newehdr(elf);
  ehdr->e_ident[EI_DATA] = ELFDATA2LSB;
  ehdr->e_type = ET_REL;
  ehdr->e_machine = EM_X86_64;
  ehdr->e_version = EV_CURRENT;
  static const char kNames[] = "\0.shstrtab\0.debug_info";
  Elf_Scn* names = elf_newscn(elf);
  Elf_Data* names_data = elf_newdata(names);
  names_data->d_buf = const_cast<char*>(kNames);
  names_data->d_size = sizeof(kNames);
  Elf64_Shdr* names_shdr = elf64_getshdr(names);
  names_shdr->sh_name = 1;
  names_shdr->sh_type = SHT_STRTAB;
  ehdr->e_shstrndx = static_cast<Elf64_Half>(elf_ndxscn(names));
  std::vector<char> zeros(inflated);
  Elf_Scn* scn = elf_newscn(elf);
  Elf_Data* data = elf_newdata(scn);
  data->d_buf = zeros.data();
  data->d_size = zeros.size();
  Elf64_Shdr* shdr = elf64_getshdr(scn);
  shdr->sh_name = 11;
  shdr->sh_type = SHT_PROGBITS;
  shdr->sh_addralign = 1;
  ASSERT_EQ(elf_compress(scn, ELFCOMPRESS_ZLIB, 0), 1) << elf_errmsg(-1);
  ASSERT_GE(elf_update(elf, ELF_C_WRITE), 0) << elf_errmsg(-1);
  elf_end(elf);
}

// The crafted file of the issue (a 1 MB file naming a 1 GB section), made
// smaller: 64 MiB in ~64 KB. It was inflated into the cache, whole; its
// claim is judged before anything is, and the file is not used at all
// (libdw would inflate the same claim).
TEST(InflatedDebugTest, ACompressedSectionClaimingFarMoreThanItsBytesIsRefusedUninflated) {
  testing::TempDir dir;
  CacheHome home(dir.path().string());
  const std::string bomb = (dir.path() / "bomb.debug").string();
  WriteZlibBomb(bomb, size_t{64} << 20);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  ASSERT_LT(std::filesystem::file_size(bomb), size_t{1} << 20);
  ASSERT_TRUE(AnyCompressed(bomb));
  EXPECT_EQ(InflatedDebugFile(bomb, "00112233445566778899aabbccddeeff00112233"), "");
  const std::filesystem::path cache = dir.path() / "sample/debug";
  if (std::filesystem::exists(cache)) {
    for (const auto& entry : std::filesystem::directory_iterator(cache)) {
      ADD_FAILURE() << "written: " << entry.path() << ", " << entry.file_size() << " bytes";
    }
  }
}

// Names planted in the cache directory, as the attacker did in a
// directory of theirs swapped in for root's: a symlink at the final name
// and at the temporary name the old code used (NAME.PID.tmp, written with
// copy_file(overwrite_existing), which followed it). Neither target
// changes; the cache holds a regular file of ours.
TEST(InflatedDebugTest, SymlinksPlantedAtTheCachesNamesAreNeverWrittenThrough) {
  testing::TempDir dir;
  CacheHome home(dir.path().string());
  const std::string compressed = FIXTURE_PROG_DEBUG_GZ_PATH;
  const std::string build_id = ReadElfBuildId(compressed).value_or("");
  ASSERT_FALSE(build_id.empty());
  const std::filesystem::path cache = dir.path() / "sample/debug";
  std::filesystem::create_directories(cache);
  std::filesystem::permissions(dir.path() / "sample", std::filesystem::perms::owner_all);
  std::filesystem::permissions(cache, std::filesystem::perms::owner_all);
  const std::string victim = (dir.path() / "victim").string();
  const std::string victim_tmp = (dir.path() / "victim_tmp").string();
  for (const std::string& path : {victim, victim_tmp}) {
    std::ofstream(path) << "root only\n";
    ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  }
  const std::filesystem::path final_name = cache / (build_id + ".debug");
  std::filesystem::create_symlink(victim, final_name);
  std::filesystem::create_symlink(victim_tmp,
                                  cache / fmt::format("{}.debug.{}.tmp", build_id, getpid()));

  const std::string inflated = InflatedDebugFile(compressed, build_id);
  EXPECT_EQ(std::filesystem::path(inflated),
            std::filesystem::canonical(cache) / final_name.filename());
  EXPECT_FALSE(std::filesystem::is_symlink(final_name));
  EXPECT_EQ(ReadElfBuildId(inflated).value_or(""), build_id);
  for (const std::string& path : {victim, victim_tmp}) {
    std::string text;
    std::getline(std::ifstream(path), text);
    EXPECT_EQ(text, "root only") << path;
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u) << path;
  }
}

// Root run with a user's XDG_CACHE_HOME (`sudo -E`): that user's directory,
// or a symlink of theirs at a middle component, means no cache, and
// nothing is made there. Needs CAP_CHOWN to make files of uid 65534.
TEST(InflatedDebugTest, NoCacheInATreeAnotherUserControls) {
  testing::TempDir dir;
  const std::string theirs = (dir.path() / "theirs").string();
  std::filesystem::create_directories(theirs);
  if (lchown(theirs.c_str(), 65534, 65534) != 0) GTEST_SKIP() << "cannot chown (needs CAP_CHOWN)";
  const std::string compressed = FIXTURE_PROG_DEBUG_GZ_PATH;
  const std::string build_id = ReadElfBuildId(compressed).value_or("");
  {
    CacheHome home(theirs);
    EXPECT_EQ(InflatedDebugFile(compressed, build_id), compressed);
    EXPECT_TRUE(std::filesystem::is_empty(theirs));
  }
  const std::string elsewhere = (dir.path() / "elsewhere").string();
  std::filesystem::create_directories(elsewhere);
  std::filesystem::create_directories(dir.path() / "mine");
  const std::string link = (dir.path() / "mine/sample").string();
  std::filesystem::create_symlink(elsewhere, link);
  ASSERT_EQ(lchown(link.c_str(), 65534, 65534), 0);
  CacheHome home((dir.path() / "mine").string());
  EXPECT_EQ(InflatedDebugFile(compressed, build_id), compressed);
  EXPECT_TRUE(std::filesystem::is_empty(elsewhere));
}

// The copy is kept under the build-id the debug file claims, and later
// runs take it for every binary of that build-id: a user's debug file (one
// claiming libc's build-id, found through their binary's .gnu_debuglink)
// is read as it is, never copied into root's cache. Needs CAP_CHOWN.
TEST(InflatedDebugTest, AnotherUsersDebugFileIsNeverCopiedIntoTheCache) {
  testing::TempDir dir;
  CacheHome home(dir.path().string());
  const std::string theirs = (dir.path() / "theirs.debug").string();
  std::filesystem::copy_file(FIXTURE_PROG_DEBUG_GZ_PATH, theirs);
  if (lchown(theirs.c_str(), 65534, 65534) != 0) GTEST_SKIP() << "cannot chown (needs CAP_CHOWN)";
  const std::string build_id = ReadElfBuildId(theirs).value_or("");
  ASSERT_FALSE(build_id.empty());
  EXPECT_EQ(InflatedDebugFile(theirs, build_id), theirs);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "sample/debug" / (build_id + ".debug")));
  // Ours, and writable by its group (not a private one): not copied either.
  ASSERT_EQ(lchown(theirs.c_str(), geteuid(), 65534), 0);
  ASSERT_EQ(chmod(theirs.c_str(), 0664), 0);
  EXPECT_EQ(InflatedDebugFile(theirs, build_id), theirs);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "sample/debug" / (build_id + ".debug")));
  // Ours alone: copied.
  ASSERT_EQ(chmod(theirs.c_str(), 0644), 0);
  EXPECT_EQ(InflatedDebugFile(theirs, build_id),
            dir.path().string() + "/sample/debug/" + build_id + ".debug");
}

// The directory is trimmed when a copy is written: a copy unused for
// longer than kDebugCacheUnusedSeconds goes.
TEST(InflatedDebugTest, CopiesLongUnusedAreRemovedWhenOneIsWritten) {
  testing::TempDir dir;
  CacheHome home(dir.path().string());
  const std::filesystem::path cache = dir.path() / "sample/debug";
  std::filesystem::create_directories(cache);
  const std::string old = (cache / "0badc0de.debug").string();
  std::ofstream(old) << "an old copy";
  const time_t when = time(nullptr) - kDebugCacheUnusedSeconds - 3600;
  const timespec times[2] = {{when, 0}, {when, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, old.c_str(), times, 0), 0);
  const std::string compressed = FIXTURE_PROG_DEBUG_GZ_PATH;
  const std::string build_id = ReadElfBuildId(compressed).value_or("");
  EXPECT_NE(InflatedDebugFile(compressed, build_id), compressed);
  EXPECT_FALSE(std::filesystem::exists(old));
}

}  // namespace
}  // namespace sample
