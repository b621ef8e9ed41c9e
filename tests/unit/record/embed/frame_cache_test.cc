// FrameCache: learnt frames round-trip through the cache file; an open
// for some offsets reads only the pieces holding them, and the rest before
// learning more; a file written for another key (build, name, debug file),
// one that fails its checksum, is cut short, is a symlink or is not ours
// counts as empty; a disabled cache gives no frames; the directory is made
// 0700.
#include "record/embed/frame_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/crc32.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"
#include "tests/unit/temp_dir.h"

namespace sample::record {
namespace {

const char* const kInline = WORKLOAD_INLINE_PATH;

// Frames of the first 4 KiB of the workload's code.
KnownFrames Learnt() {
  KnownFrames known;
  auto symbolizer = BinarySymbolizer::Open(kInline);
  EXPECT_TRUE(symbolizer);
  if (!symbolizer) return known;
  for (const auto& segment : symbolizer->elf_symbols().segments()) {
    if (!segment.executable) continue;
    known.Learn(*symbolizer, segment.offset,
                segment.offset + std::min<uint64_t>(segment.filesz, 4096), "inline");
  }
  EXPECT_FALSE(known.runs().empty());
  return known;
}

// The same offsets learnt, the same frames at each (the tables a file
// gives back are in another order, and ranges that touch may be one:
// KnownFrames::Join).
void ExpectSameFrames(const KnownFrames& a, const KnownFrames& b) {
  const auto bytes = [](const KnownFrames& known) {
    uint64_t sum = 0;
    for (const KnownFrames::Range& range : known.ranges()) sum += range.end - range.begin;
    return sum;
  };
  ASSERT_EQ(bytes(a), bytes(b));
  for (const KnownFrames::Range& range : a.ranges()) {
    for (uint64_t offset = range.begin; offset < range.end; ++offset) {
      ASSERT_EQ(a.At(offset), b.At(offset)) << offset;
    }
  }
}

// The executable segment's file offsets in `symbolizer`'s binary.
KnownFrames::Range TextOf(const BinarySymbolizer& symbolizer) {
  for (const auto& segment : symbolizer.elf_symbols().segments()) {
    if (segment.executable) return {segment.offset, segment.offset + segment.filesz};
  }
  ADD_FAILURE() << "no executable segment";
  return {};
}

class FrameCacheTest : public ::testing::Test {
 protected:
  std::string dir() const { return tmp_.path().string() + "/frames"; }
  const FrameCacheKey key_{"00112233445566778899aabbccddeeff00112233", "inline", ""};

  // Saves Learnt() under key_.
  KnownFrames Save() {
    FrameCache cache = FrameCache::Open(dir(), key_);
    EXPECT_NE(cache.known(), nullptr);
    if (cache.known() == nullptr) return {};
    EXPECT_TRUE(cache.known()->runs().empty());
    *cache.known() = Learnt();
    cache.Save();
    return *cache.known();
  }

  // The frames Open finds for `key`.
  KnownFrames Reopened(const FrameCacheKey& key) {
    FrameCache cache = FrameCache::Open(dir(), key);
    EXPECT_NE(cache.known(), nullptr);
    return cache.known() != nullptr ? *cache.known() : KnownFrames();
  }

  testing::TempDir tmp_;
};

TEST_F(FrameCacheTest, SavedFramesAreFoundAgain) {
  const KnownFrames saved = Save();
  ExpectSameFrames(Reopened(key_), saved);
  struct stat st;
  ASSERT_EQ(stat(dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(FrameCache::PathOf(dir(), key_).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// The tables are read once into the process's own memory and used there:
// they outlive the file, and learning more copies them first.
TEST_F(FrameCacheTest, FramesOutliveTheirFileAndLearnMore) {
  auto symbolizer = BinarySymbolizer::Open(kInline);
  ASSERT_TRUE(symbolizer);
  const KnownFrames::Range text = TextOf(*symbolizer);
  ASSERT_GT(text.end - text.begin, 64u);
  const uint64_t half = text.begin + (text.end - text.begin) / 2;
  {
    FrameCache cache = FrameCache::Open(dir(), key_);
    ASSERT_NE(cache.known(), nullptr);
    cache.known()->Learn(*symbolizer, text.begin, half, "inline");
    cache.Save();
  }
  FrameCache cache = FrameCache::Open(dir(), key_);
  ASSERT_NE(cache.known(), nullptr);
  KnownFrames& known = *cache.known();
  ASSERT_FALSE(known.Covers(half));
  // Cut to nothing under it (another program, an NFS server's rename):
  // the tables are the process's own.
  ASSERT_EQ(truncate(FrameCache::PathOf(dir(), key_).c_str(), 0), 0);
  KnownFrames whole;  // learnt in one go, never read from a file
  whole.Learn(*symbolizer, text.begin, text.end, "inline");
  EXPECT_EQ(known.At(text.begin + 3), whole.At(text.begin + 3));

  EXPECT_EQ(known.Learn(*symbolizer, text.begin, text.end, "inline"), text.end - half);
  EXPECT_TRUE(known.Valid());
  for (uint64_t offset = text.begin; offset < text.end; ++offset) {
    ASSERT_EQ(known.At(offset), whole.At(offset)) << offset;
  }
  cache.Save();
  ExpectSameFrames(Reopened(key_), known);
}

// A recording reads the pieces holding its offsets; learning reads the
// rest first, so that nothing the file held is learnt again or lost.
TEST_F(FrameCacheTest, OnlyThePiecesHoldingTheOffsetsWantedAreRead) {
  auto symbolizer = BinarySymbolizer::Open(kInline);
  ASSERT_TRUE(symbolizer);
  const KnownFrames::Range text = TextOf(*symbolizer);
  KnownFrames whole;
  whole.Learn(*symbolizer, text.begin, text.end, "inline");
  ASSERT_GT(whole.runs().size(), 40u);
  {
    FrameCache cache = FrameCache::Open(dir(), key_);
    ASSERT_NE(cache.known(), nullptr);
    *cache.known() = whole;
    cache.Save(/*piece_bytes=*/256);
  }
  const uint64_t first = text.begin + 1;
  const uint64_t last = text.end - 1;
  const std::vector<uint64_t> wanted = {last, first, last};
  FrameCache cache = FrameCache::Open(dir(), key_, wanted);
  ASSERT_NE(cache.known(), nullptr);
  KnownFrames& known = *cache.known();
  EXPECT_EQ(cache.stats().pieces_read, 2u);
  EXPECT_GT(cache.stats().pieces, 8u);
  EXPECT_TRUE(known.Valid());
  EXPECT_EQ(known.At(first), whole.At(first));
  EXPECT_EQ(known.At(last), whole.At(last));
  const uint64_t middle = text.begin + (text.end - text.begin) / 2;
  EXPECT_FALSE(known.Covers(middle)) << "a piece not asked for was read";
  // Nothing new: the rest read, nothing learnt, nothing saved.
  EXPECT_EQ(known.Learn(*symbolizer, text.begin, text.end, "inline"), 0u);
  ExpectSameFrames(known, whole);
  struct stat before, after;
  ASSERT_EQ(stat(FrameCache::PathOf(dir(), key_).c_str(), &before), 0);
  cache.Save();  // a save renames a new file over it
  ASSERT_EQ(stat(FrameCache::PathOf(dir(), key_).c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  // Nothing of the file is wanted: nothing read.
  const std::vector<uint64_t> outside = {text.end + 100};
  FrameCache none = FrameCache::Open(dir(), key_, outside);
  ASSERT_NE(none.known(), nullptr);
  EXPECT_EQ(none.stats().pieces_read, 0u);
  EXPECT_TRUE(none.known()->ranges().empty());
}

TEST_F(FrameCacheTest, AnotherKeyFindsNothing) {
  Save();
  // The same file name, another identity: a debug file appeared, another
  // copy of the build (stripped) is read.
  FrameCacheKey with_debug = key_;
  with_debug.debug = kInline;
  FrameCacheKey other_copy = key_;
  other_copy.fingerprint = "another";
  for (const FrameCacheKey& other : {with_debug, other_copy}) {
    EXPECT_EQ(FrameCache::PathOf(dir(), other), FrameCache::PathOf(dir(), key_));
    EXPECT_NE(FrameCache::Identity(other), FrameCache::Identity(key_));
    EXPECT_TRUE(Reopened(other).runs().empty());
  }
  EXPECT_FALSE(Reopened(key_).runs().empty()) << "what another key saw was not saved over it";
}

// A stripped copy keeps the build-id, not the section headers.
TEST_F(FrameCacheTest, FingerprintsTellCopiesOfABuildApart) {
  auto full = ElfFile::Open(kInline);
  auto stripped = ElfFile::Open(WORKLOAD_INLINE_STRIPPED_PATH);
  ASSERT_TRUE(full);
  ASSERT_TRUE(stripped);
  ASSERT_EQ(ReadElfBuildId(*full), ReadElfBuildId(*stripped));
  EXPECT_NE(FrameCache::Fingerprint(*full), FrameCache::Fingerprint(*stripped));
  auto again = ElfFile::Open(kInline);
  ASSERT_TRUE(again);
  EXPECT_EQ(FrameCache::Fingerprint(*again), FrameCache::Fingerprint(*full));
}

TEST_F(FrameCacheTest, DamagedFilesCountAsEmpty) {
  Save();
  const std::string path = FrameCache::PathOf(dir(), key_);
  const auto size = std::filesystem::file_size(path);
  // A byte changed anywhere past the magic.
  for (const uint64_t at : {uint64_t{5}, uint64_t{9}, uint64_t{40}, size / 2, size - 1}) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(at));
    const char c = static_cast<char>(file.get());
    file.seekp(static_cast<std::streamoff>(at));
    file.put(static_cast<char>(c ^ 0x20));
    file.close();
    EXPECT_TRUE(Reopened(key_).runs().empty()) << "byte " << at;
    Save();
  }
  // Cut short.
  std::filesystem::resize_file(path, size - 3);
  EXPECT_TRUE(Reopened(key_).runs().empty());
  std::filesystem::resize_file(path, 5);
  EXPECT_TRUE(Reopened(key_).runs().empty());
  // Replaced by a symlink to a good copy.
  Save();
  std::filesystem::rename(path, path + ".real");
  std::filesystem::create_symlink(path + ".real", path);
  EXPECT_TRUE(Reopened(key_).runs().empty());
  // A save replaces the link, not its target.
  Save();
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_FALSE(Reopened(key_).runs().empty());
}

// A directory whose entries share bytes (a million entries naming one
// large piece would have Load allocate terabytes), or whose piece holds
// ranges outside its entry's span, counts as empty: its head's checksum
// made right, as a crafted file's would be.
TEST_F(FrameCacheTest, CraftedDirectoriesCountAsEmpty) {
  auto symbolizer = BinarySymbolizer::Open(kInline);
  ASSERT_TRUE(symbolizer);
  const KnownFrames::Range text = TextOf(*symbolizer);
  {
    FrameCache cache = FrameCache::Open(dir(), key_);
    ASSERT_NE(cache.known(), nullptr);
    cache.known()->Learn(*symbolizer, text.begin, text.end, "inline");
    cache.Save(/*piece_bytes=*/256);
  }
  const std::string path = FrameCache::PathOf(dir(), key_);
  std::string good;
  {
    std::ifstream in(path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  // The head: 16 bytes, the identity, zeros to 8, then 32-byte entries
  // {begin, end, at, size | crc << 32}.
  const size_t directory = (16 + FrameCache::Identity(key_).size() + 7) / 8 * 8;
  uint32_t count = 0;
  std::memcpy(&count, good.data() + 12, 4);
  ASSERT_GT(count, 2u);
  const auto field = [&](std::string& bytes, size_t entry, size_t index) {
    return bytes.data() + directory + entry * 32 + index * 8;
  };
  const auto write = [&](std::string bytes) {
    const uint32_t crc =
        Crc32(std::as_bytes(std::span(bytes)).subspan(8, directory + count * 32 - 8));
    std::memcpy(bytes.data() + 4, &crc, 4);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  };
  write(good);
  EXPECT_EQ(Reopened(key_).ranges().size(), 1u) << "the head rewritten as it was";
  // The second entry names the first's bytes (and its checksum).
  std::string shared = good;
  std::memcpy(field(shared, 1, 2), field(shared, 0, 2), 16);
  write(shared);
  EXPECT_TRUE(Reopened(key_).ranges().empty());
  // The first entry's span cut short of its piece's ranges.
  std::string narrow = good;
  uint64_t begin = 0;
  std::memcpy(&begin, field(narrow, 0, 0), 8);
  const uint64_t end = begin + 1;
  std::memcpy(field(narrow, 0, 1), &end, 8);
  write(narrow);
  const std::vector<uint64_t> wanted = {begin};
  FrameCache cache = FrameCache::Open(dir(), key_, wanted);
  ASSERT_NE(cache.known(), nullptr);
  EXPECT_TRUE(cache.known()->ranges().empty());
}

TEST_F(FrameCacheTest, DisabledWithoutADirectoryOrABuildId) {
  EXPECT_EQ(FrameCache::Open("", key_).known(), nullptr);
  FrameCacheKey no_id = key_;
  no_id.build_id = "";
  EXPECT_EQ(FrameCache::Open(dir(), no_id).known(), nullptr);
  no_id.build_id = "../../etc";
  EXPECT_EQ(FrameCache::Open(dir(), no_id).known(), nullptr);
  // A directory others may write is not used.
  std::filesystem::create_directories(dir());
  chmod(dir().c_str(), 0777);
  EXPECT_EQ(FrameCache::Open(dir(), key_).known(), nullptr);
}

TEST_F(FrameCacheTest, NamesAreMadeSafeForFileNames) {
  FrameCacheKey vdso = key_;
  vdso.display_name = "[vdso]";
  EXPECT_EQ(FrameCache::PathOf("/c", vdso), "/c/" + key_.build_id + "._vdso_.frames");
  vdso.display_name = "../../x y";
  EXPECT_EQ(FrameCache::PathOf("/c", vdso), "/c/" + key_.build_id + "..._.._x_y.frames");
  // A Go build ID (166 hex digits) is hashed in the name, whole in the identity.
  FrameCacheKey go = key_;
  go.build_id = std::string(166, 'a');
  const std::string path = FrameCache::PathOf("/c", go);
  EXPECT_LT(path.size(), 64u) << path;
  go.build_id.back() = 'b';
  EXPECT_NE(FrameCache::PathOf("/c", go), path);
  EXPECT_NE(FrameCache::Identity(go).find(go.build_id), std::string::npos);
}

// The directory is trimmed once a recording, after its saves (Trim): a
// save alone lists nothing (it used to trim, listing and stat'ing every
// file of the directory once a binary), and the trim removes a file
// unused for kFrameCacheUnusedSeconds (each new build of a binary adds a
// file; nothing removed them) and keeps a recently used one.
TEST_F(FrameCacheTest, TheTrimAfterTheSavesRemovesFilesLongUnused) {
  std::filesystem::create_directories(dir());
  const std::string old = dir() + "/ffff.old.frames";
  const std::string recent = dir() + "/eeee.recent.frames";
  std::ofstream(old) << "old frames";
  std::ofstream(recent) << "recent frames";
  const time_t when = time(nullptr) - kFrameCacheUnusedSeconds - 3600;
  const timespec times[2] = {{when, 0}, {when, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, old.c_str(), times, 0), 0);
  Save();
  EXPECT_TRUE(std::filesystem::exists(old)) << "a save trimmed the directory";
  FrameCache::Trim(dir());
  EXPECT_FALSE(std::filesystem::exists(old));
  EXPECT_TRUE(std::filesystem::exists(recent));
  EXPECT_TRUE(std::filesystem::exists(FrameCache::PathOf(dir(), key_)));
}

// A trim makes no directory: a recording that saved nothing leaves none.
TEST_F(FrameCacheTest, ATrimMakesNothing) {
  FrameCache::Trim(dir());
  EXPECT_FALSE(std::filesystem::exists(dir()));
  FrameCache::Trim("");
}

// Root run with a user's HOME: a frames directory reached through a
// symlink another user planted (uid 65534) is no cache, and nothing is
// written where it points. Needs CAP_CHOWN.
TEST_F(FrameCacheTest, NoCacheThroughAnotherUsersSymlink) {
  const std::string elsewhere = tmp_.path().string() + "/elsewhere";
  std::filesystem::create_directories(elsewhere);
  std::filesystem::create_symlink(elsewhere, dir());
  if (lchown(dir().c_str(), 65534, 65534) != 0) GTEST_SKIP() << "cannot chown (needs CAP_CHOWN)";
  FrameCache cache = FrameCache::Open(dir(), key_);
  EXPECT_EQ(cache.known(), nullptr);
  EXPECT_TRUE(std::filesystem::is_empty(elsewhere));
}

}  // namespace
}  // namespace sample::record
