// Tests for PerfMap: the /tmp/perf-PID.map parser (synthetic text), address
// lookup, and the rule that only maps the JIT process's own user could have
// written name its code.
#include "libsample/symbols/perf_map.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/file_owner.h"
#include "tests/unit/group_probe.h"
#include "tests/unit/symbolizer_test_util.h"

namespace sample {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

std::string NameAt(const PerfMap& map, uint64_t addr) {
  const PerfMapSymbol* symbol = map.Find(addr);
  return symbol == nullptr ? "(none)" : symbol->name;
}

TEST(PerfMapTest, ParsesStartSizeAndNameToEndOfLine) {
  const PerfMap map = PerfMap::Parse(
      "7f0000001000 40 LazyCompile:~fib /app/fib.js:3\n"
      "0x7f0000002000 0x10 py::Interp::eval(int, char const*)\n"
      "7F0000003000 8 [stub] with  two  spaces\n");
  ASSERT_EQ(map.symbols().size(), 3u);
  EXPECT_EQ(map.symbols()[0].start, 0x7f0000001000u);
  EXPECT_EQ(map.symbols()[0].size, 0x40u);
  EXPECT_EQ(map.symbols()[0].name, "LazyCompile:~fib /app/fib.js:3");
  EXPECT_EQ(map.symbols()[1].start, 0x7f0000002000u);
  EXPECT_EQ(map.symbols()[1].size, 0x10u);
  EXPECT_EQ(map.symbols()[1].name, "py::Interp::eval(int, char const*)");
  EXPECT_EQ(map.symbols()[2].start, 0x7f0000003000u);
  EXPECT_EQ(map.symbols()[2].name, "[stub] with  two  spaces");
  EXPECT_EQ(map.malformed_lines(), 0u);
}

TEST(PerfMapTest, CountsBlankAndGarbageLinesAndGoesOn) {
  const PerfMap map = PerfMap::Parse(
      "\n"
      "1000 10 first\n"
      "   \n"
      "not a line at all\n"
      "2000 zz bad_size\n"
      "3000 10\n"   // no name
      "4000 10 \n"  // empty name
      "5000\n"      // start only
      "ffffffffffffffff 10 wraps\n"
      "6000 10 last\r\n");  // CRLF tolerated
  EXPECT_EQ(map.blank_lines(), 2u);
  EXPECT_EQ(map.malformed_lines(), 6u);
  ASSERT_EQ(map.symbols().size(), 2u);
  EXPECT_EQ(map.symbols()[0].name, "first");
  EXPECT_EQ(map.symbols()[1].name, "last");
  // A last line without newline is still a line.
  EXPECT_EQ(PerfMap::Parse("10 4 tail").symbols().size(), 1u);
}

TEST(PerfMapTest, FindsByAbsoluteAddress) {
  const PerfMap map = PerfMap::Parse(
      "3000 100 c\n"
      "1000 100 a\n"
      "2000 80 b\n"
      "5000 0 zero_size\n");
  EXPECT_EQ(NameAt(map, 0xfff), "(none)");
  EXPECT_EQ(NameAt(map, 0x1000), "a");
  EXPECT_EQ(NameAt(map, 0x10ff), "a");
  EXPECT_EQ(NameAt(map, 0x1100), "(none)");
  EXPECT_EQ(NameAt(map, 0x207f), "b");
  EXPECT_EQ(NameAt(map, 0x2080), "(none)");
  EXPECT_EQ(NameAt(map, 0x3050), "c");
  EXPECT_EQ(NameAt(map, 0x5000), "zero_size");
  EXPECT_EQ(NameAt(map, 0x5001), "(none)");
  // Sorted by address whatever the file order.
  EXPECT_EQ(map.symbols().front().name, "a");
}

TEST(PerfMapTest, LaterEntryWinsWhereTheJitReusedMemory) {
  const PerfMap map = PerfMap::Parse(
      "1000 1000 old_big\n"
      "1800 100 new_inside\n"
      "1000 10 newest_at_start\n");
  EXPECT_EQ(NameAt(map, 0x1000), "newest_at_start");
  EXPECT_EQ(NameAt(map, 0x1010), "old_big");
  EXPECT_EQ(NameAt(map, 0x1850), "new_inside");
  EXPECT_EQ(NameAt(map, 0x1900), "old_big");
  EXPECT_EQ(NameAt(map, 0x1fff), "old_big");
  EXPECT_EQ(NameAt(map, 0x2000), "(none)");
}

class PerfMapFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ / "perf-1234.map";
    std::ofstream(path_) << "1000 10 jitted\n";
  }

  ScratchDir dir_;
  std::string path_;
};

TEST_F(PerfMapFileTest, OwnMapIsUsed) {
  auto map = PerfMap::Load(path_, PerfMapOptions{.user = geteuid()});
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(NameAt(*map, 0x1008), "jitted");
}

// Root's file names only root's code: a user who bind-mounts a root-only
// file over /tmp/perf-PID.map in a mount namespace of theirs would have
// root's recorder copy it (issue 56).
TEST_F(PerfMapFileTest, MapOfRootNamesOnlyRootsCode) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to own a file as root";
  ASSERT_EQ(chmod(path_.c_str(), 0600), 0);
  auto other = PerfMap::Load(path_, PerfMapOptions{.user = 4242});
  ASSERT_FALSE(other);
  EXPECT_THAT(other.error().message,
              HasSubstr("ignored: owned by uid 0, not by the process's user (uid 4242)"));
  auto map = PerfMap::Load(path_, PerfMapOptions{.user = 0});
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(NameAt(*map, 0x1000), "jitted");
}

// The rule alone, on the stat of a file: its owner is the process's user,
// who can read it, and no one else can write it.
TEST(CheckPerfMapFileTest, OwnerMustBeTheProcessUserWhoCanReadItAndNoOneElseWrite) {
  struct stat st {};
  st.st_mode = S_IFREG | 0644;
  st.st_uid = 1001;
  EXPECT_TRUE(CheckPerfMapFile("/tmp/perf-9.map", st, PerfMapOptions{.user = 1001}));
  auto root = CheckPerfMapFile("/tmp/perf-9.map", st, PerfMapOptions{.user = 0});
  ASSERT_FALSE(root);
  EXPECT_THAT(root.error().message,
              HasSubstr("/tmp/perf-9.map: ignored: owned by uid 1001, not by the process's user "
                        "(uid 0)"));
  st.st_mode = S_IFREG | 0200;
  auto unreadable = CheckPerfMapFile("/tmp/perf-9.map", st, PerfMapOptions{.user = 1001});
  ASSERT_FALSE(unreadable);
  EXPECT_THAT(unreadable.error().message, HasSubstr("not readable by its owner (mode 0200)"));
  st.st_mode = S_IFREG | 0666;
  auto writable = CheckPerfMapFile("/tmp/perf-9.map", st, PerfMapOptions{.user = 1001});
  ASSERT_FALSE(writable);
  EXPECT_THAT(writable.error().message, HasSubstr("writable by everyone (mode 0666)"));
  EXPECT_TRUE(CheckPerfMapFile("/tmp/perf-9.map", st, PerfMapOptions{.user = 0, .force = true}));
}

// A JIT run with umask 002 and a private group of its user's own (Debian,
// Fedora) writes its map 0664: only that user may write it, so it is used.
TEST_F(PerfMapFileTest, MapWritableByItsOwnersPrivateGroupIsUsed) {
  if (!IsPrivateGroupOf(geteuid(), getegid())) {
    GTEST_SKIP() << "gid " << getegid() << " is not uid " << geteuid()
                 << "'s private group on this host";
  }
  ASSERT_EQ(chmod(path_.c_str(), 0664), 0);
  auto map = PerfMap::Load(path_, PerfMapOptions{.user = geteuid()});
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(NameAt(*map, 0x1000), "jitted");
}

// The owner only claimed (a recording's "jit_uid"): a map the user shown
// its names could not read is not read for them.
TEST(CheckPerfMapFileTest, AClaimedOwnersPrivateMapIsNotShownToAnotherUser) {
  struct stat st {};
  st.st_mode = S_IFREG | 0600;
  st.st_uid = 1001;
  const PerfMapOptions claimed{.user = 1001, .shown_to = 0};
  auto hidden = CheckPerfMapFile("/tmp/perf-9.map", st, claimed);
  ASSERT_FALSE(hidden);
  EXPECT_THAT(hidden.error().message,
              HasSubstr("owned by uid 1001 and not readable by others (mode 0600), and only the "
                        "recording says that uid 1001 ran the process: not shown to uid 0"));
  st.st_mode = S_IFREG | 0644;
  EXPECT_TRUE(CheckPerfMapFile("/tmp/perf-9.map", st, claimed));
  st.st_mode = S_IFREG | 0600;
  EXPECT_TRUE(
      CheckPerfMapFile("/tmp/perf-9.map", st, PerfMapOptions{.user = 1001, .shown_to = 1001}));
  EXPECT_TRUE(CheckPerfMapFile("/tmp/perf-9.map", st, PerfMapOptions{.user = 1001}));
}

TEST_F(PerfMapFileTest, LargeMapIsReadUpToItsBoundAtALineEnd) {
  std::ofstream(path_) << "1000 10 first\n2000 10 second\n3000 10 third\n";
  auto map = PerfMap::Load(path_, PerfMapOptions{.user = geteuid(), .max_bytes = 30});
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_TRUE(map->cut());
  EXPECT_EQ(NameAt(*map, 0x2000), "second");
  EXPECT_EQ(NameAt(*map, 0x3000), "(none)");
  auto whole = PerfMap::Load(path_, PerfMapOptions{.user = geteuid()});
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_FALSE(whole->cut());
  EXPECT_EQ(NameAt(*whole, 0x3000), "third");
}

TEST(ProcessUidTest, ReadsTheRealUidFromStatus) {
  EXPECT_EQ(ProcessUid(static_cast<uint32_t>(getpid())), getuid());
  ScratchDir proc;
  std::filesystem::create_directories(proc / "77");
  std::ofstream(proc / "77/status") << "Name:\tjit\nUmask:\t0022\nUid:\t1001\t0\t0\t0\n";
  EXPECT_EQ(ProcessUid(77, proc.path()), 1001u);
  EXPECT_EQ(ProcessUid(78, proc.path()), std::nullopt);
}

TEST_F(PerfMapFileTest, MapOfAnotherUserIsIgnoredWithANote) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  ASSERT_EQ(chown(path_.c_str(), 4242, 4242), 0);
  auto map = PerfMap::Load(path_, PerfMapOptions{.user = 0});
  ASSERT_FALSE(map);
  EXPECT_THAT(map.error().message, HasSubstr(path_));
  EXPECT_THAT(map.error().message, HasSubstr("ignored: owned by uid 4242"));
  // The same user reads it; --force overrides the rule.
  EXPECT_TRUE(PerfMap::Load(path_, PerfMapOptions{.user = 4242}));
  auto forced = PerfMap::Load(path_, PerfMapOptions{.user = 0, .force = true});
  ASSERT_TRUE(forced) << forced.error().message;
  EXPECT_EQ(NameAt(*forced, 0x1000), "jitted");
}

// Anyone who can write the map can put names on our code; a link could
// point anywhere; a FIFO would block the report.
TEST_F(PerfMapFileTest, WritableLinkedOrFifoMapsAreIgnored) {
  if (const auto shared = sample::testing::SharedGroupForSelf()) {
    ASSERT_EQ(chown(path_.c_str(), static_cast<uid_t>(-1), *shared), 0);
    ASSERT_EQ(chmod(path_.c_str(), 0620), 0);
    auto group = PerfMap::Load(path_, PerfMapOptions{.user = geteuid()});
    ASSERT_FALSE(group);
    EXPECT_THAT(group.error().message,
                HasSubstr(fmt::format("ignored: writable by its group, gid {}, not the owner's "
                                      "private group (mode 0620)",
                                      *shared)));
  }
  ASSERT_EQ(chmod(path_.c_str(), 0646), 0);
  auto everyone = PerfMap::Load(path_, PerfMapOptions{.user = geteuid()});
  ASSERT_FALSE(everyone);
  EXPECT_THAT(everyone.error().message, HasSubstr("writable by everyone"));
  EXPECT_TRUE(PerfMap::Load(path_, PerfMapOptions{.user = geteuid(), .force = true}));

  ASSERT_EQ(chmod(path_.c_str(), 0644), 0);
  const std::string link = dir_ / "perf-1.map";
  ASSERT_EQ(symlink(path_.c_str(), link.c_str()), 0);
  auto linked = PerfMap::Load(link, PerfMapOptions{.user = geteuid()});
  ASSERT_FALSE(linked);
  EXPECT_THAT(linked.error().message, HasSubstr("it is a symbolic link"));

  const std::string fifo = dir_ / "perf-2.map";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = PerfMap::Load(fifo, PerfMapOptions{.user = geteuid()});
  ASSERT_FALSE(from_fifo);
  EXPECT_THAT(from_fifo.error().message, HasSubstr("it is a FIFO"));
}

TEST_F(PerfMapFileTest, MissingOrNonRegularFilesAreNotes) {
  auto missing = PerfMap::Load(dir_ / "perf-999.map", PerfMapOptions{.user = geteuid()});
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("perf-999.map"));
  auto directory = PerfMap::Load(dir_.path(), PerfMapOptions{.user = geteuid()});
  ASSERT_FALSE(directory);
  EXPECT_THAT(directory.error().message, HasSubstr("not a regular file"));
}

}  // namespace
}  // namespace sample
