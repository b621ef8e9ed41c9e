// The checked walk to a cache directory and the file operations under it
// (libsample/cache_dir.h): missing directories made 0700; a symlink of this
// user (or root) followed, its target walked by the same rules; a symlink
// or a directory of another user, or a directory its group may write,
// refuses the cache and nothing is made beyond it; a sticky directory
// passes; files read only as regular files of this user, written under a
// temporary name and renamed over whatever sat at the name; trimming by
// age, bytes and count, least recently used first. Tests that make a file
// of another user (uid 65534, nobody) need CAP_CHOWN and skip without it.
#include "libsample/cache_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "libsample/file_owner.h"
#include "tests/unit/group_probe.h"
#include "tests/unit/temp_dir.h"

namespace sample {
namespace {

constexpr uid_t kOtherUid = 65534;

namespace fs = std::filesystem;

class CacheDirTest : public ::testing::Test {
 protected:
  std::string At(const std::string& relative) const { return (temp_.path() / relative).string(); }

  // Gives `path` (not followed) to uid 65534; false without the privilege.
  static bool GiveAway(const std::string& path) {
    return lchown(path.c_str(), kOtherUid, kOtherUid) == 0;
  }

  static void Touch(const std::string& path, std::string_view text, time_t when) {
    std::ofstream(path) << text;
    const timespec times[2] = {{when, 0}, {when, 0}};
    utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW);
  }

  testing::TempDir temp_;
};

TEST_F(CacheDirTest, MissingDirectoriesAreMadePrivate) {
  auto dir = OpenCacheDirectory(At("home/.cache/sample/debug"));
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_TRUE(dir->fd.valid());
  EXPECT_EQ(fs::weakly_canonical(dir->path), fs::weakly_canonical(At("home/.cache/sample/debug")));
  for (const char* made :
       {"home", "home/.cache", "home/.cache/sample", "home/.cache/sample/debug"}) {
    struct stat st;
    ASSERT_EQ(stat(At(made).c_str(), &st), 0) << made;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << made;
    EXPECT_EQ(st.st_uid, geteuid()) << made;
  }
  // Not made when only reading.
  EXPECT_FALSE(OpenCacheDirectory(At("other/sample"), {.create = false}));
  EXPECT_FALSE(fs::exists(At("other")));
  EXPECT_FALSE(OpenCacheDirectory("relative/sample"));
}

TEST_F(CacheDirTest, ASymlinkOfThisUserOrRootIsFollowedToItsPhysicalPath) {
  fs::create_directories(At("elsewhere"));
  fs::create_directories(At("home/.cache"));
  fs::create_symlink(At("elsewhere"), At("home/.cache/sample"));
  // A relative link through "..", too.
  fs::create_symlink("../elsewhere", At("home/up"));
  auto dir = OpenCacheDirectory(At("home/.cache/sample/frames"));
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(dir->path, fs::canonical(At("elsewhere")).string() + "/frames");
  EXPECT_TRUE(fs::is_directory(At("elsewhere/frames")));
  auto up = OpenCacheDirectory(At("home/up/annotate"));
  ASSERT_TRUE(up) << up.error().message;
  EXPECT_EQ(up->path, fs::canonical(At("elsewhere")).string() + "/annotate");
  // A loop ends.
  fs::create_symlink(At("loop"), At("loop"));
  EXPECT_FALSE(OpenCacheDirectory(At("loop/sample")));
}

TEST_F(CacheDirTest, ASymlinkOfAnotherUserAtAMiddleComponentIsRefused) {
  fs::create_directories(At("elsewhere"));
  fs::create_directories(At("home/.cache"));
  fs::create_symlink(At("elsewhere"), At("home/.cache/sample"));
  if (!GiveAway(At("home/.cache/sample"))) GTEST_SKIP() << "cannot chown (needs CAP_CHOWN)";
  auto dir = OpenCacheDirectory(At("home/.cache/sample/debug"));
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("a symlink of uid 65534"), std::string::npos)
      << dir.error().message;
  EXPECT_TRUE(fs::is_empty(At("elsewhere")));
}

TEST_F(CacheDirTest, ADirectoryOfAnotherUserRefusesTheCacheAndNothingIsMadeThere) {
  // Root run with HOME=/home/alice: alice's home.
  fs::create_directories(At("alice"));
  if (!GiveAway(At("alice"))) GTEST_SKIP() << "cannot chown (needs CAP_CHOWN)";
  auto dir = OpenCacheDirectory(At("alice/.cache/sample"));
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("owned by uid 65534"), std::string::npos)
      << dir.error().message;
  EXPECT_TRUE(fs::is_empty(At("alice")));
  // The cache directory itself another user's.
  fs::create_directories(At("mine/sample"));
  ASSERT_TRUE(GiveAway(At("mine/sample")));
  EXPECT_FALSE(OpenCacheDirectory(At("mine/sample")));
}

TEST_F(CacheDirTest, AGroupWritableComponentIsRefusedAndAStickyOnePasses) {
  const auto group = testing::SharedGroupForSelf();
  if (!group) GTEST_SKIP() << "this user can give its files no group but its private one";
  fs::create_directories(At("shared"));
  ASSERT_EQ(chown(At("shared").c_str(), static_cast<uid_t>(-1), *group), 0);
  ASSERT_EQ(chmod(At("shared").c_str(), 0770), 0);
  auto dir = OpenCacheDirectory(At("shared/sample"));
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("writable by its group, gid"), std::string::npos)
      << dir.error().message;
  EXPECT_TRUE(fs::is_empty(At("shared")));
  // Like /tmp: world-writable but sticky.
  fs::create_directories(At("tmp"));
  ASSERT_EQ(chmod(At("tmp").c_str(), 01777), 0);
  auto sticky = OpenCacheDirectory(At("tmp/sample"));
  ASSERT_TRUE(sticky) << sticky.error().message;
  // ... but the cache itself may not be: its files are read.
  ASSERT_EQ(chmod(At("tmp/sample").c_str(), 01777), 0);
  EXPECT_FALSE(OpenCacheDirectory(At("tmp/sample")));
}

// umask 002 with a private group of one's own (Debian, Fedora): other
// tools make ~/.cache 0775 and files 0664; only the user may write them,
// so the cache is used. A shared group's write refuses a file.
TEST_F(CacheDirTest, WritableByTheOwnersPrivateGroupIsOwnedAlone) {
  if (!IsPrivateGroupOf(geteuid(), getegid())) {
    GTEST_SKIP() << "gid " << getegid() << " is not uid " << geteuid()
                 << "'s private group on this host";
  }
  fs::create_directories(At("home/.cache/sample"));
  for (const char* made : {"home", "home/.cache", "home/.cache/sample"}) {
    ASSERT_EQ(chmod(At(made).c_str(), 0775), 0) << made;
  }
  auto dir = OpenCacheDirectory(At("home/.cache/sample/debug"));
  ASSERT_TRUE(dir) << dir.error().message;
  auto own = OpenCacheDirectory(At("home/.cache/sample"));
  ASSERT_TRUE(own) << own.error().message;
  Touch(At("home/.cache/sample/file"), "file", time(nullptr));
  ASSERT_EQ(chmod(At("home/.cache/sample/file").c_str(), 0664), 0);
  EXPECT_TRUE(OpenCacheFile(own->fd.get(), "file"));
  if (const auto shared = testing::SharedGroupForSelf()) {
    ASSERT_EQ(chown(At("home/.cache/sample/file").c_str(), static_cast<uid_t>(-1), *shared), 0);
    ASSERT_EQ(chmod(At("home/.cache/sample/file").c_str(), 0664), 0);
    EXPECT_FALSE(OpenCacheFile(own->fd.get(), "file"));
    ASSERT_EQ(chown(At("home/.cache/sample").c_str(), static_cast<uid_t>(-1), *shared), 0);
    EXPECT_FALSE(OpenCacheDirectory(At("home/.cache/sample")));
  }
}

// A refusal by the rules is kept for the report's one warning; a cache
// directory that is only missing is no refusal.
TEST_F(CacheDirTest, TheFirstRefusalIsKeptForAWarning) {
  EXPECT_FALSE(OpenCacheDirectory(At("missing/sample"), {.create = false}));
  EXPECT_EQ(CacheRefusal(At("missing")), "");
  Touch(At("file"), "not a directory", time(nullptr));
  EXPECT_FALSE(OpenCacheDirectory(At("file/sample")));
  EXPECT_TRUE(CacheRefusal(At("file")).ends_with("/file: a regular file, not a directory"))
      << CacheRefusal(At("file"));
  EXPECT_EQ(CacheRefusal(At("missing")), "");
}

TEST_F(CacheDirTest, OnlyRegularFilesOfThisUserAreRead) {
  auto dir = OpenCacheDirectory(At("sample"));
  ASSERT_TRUE(dir) << dir.error().message;
  Touch(At("secret"), "secret", time(nullptr));
  Touch(At("sample/good"), "good", time(nullptr));
  fs::create_symlink(At("secret"), At("sample/link"));
  ASSERT_EQ(mkfifo(At("sample/fifo").c_str(), 0600), 0);
  Touch(At("sample/open"), "open", time(nullptr));
  ASSERT_EQ(chmod(At("sample/open").c_str(), 0666), 0);
  EXPECT_TRUE(OpenCacheFile(dir->fd.get(), "good"));
  EXPECT_FALSE(OpenCacheFile(dir->fd.get(), "link"));
  EXPECT_FALSE(OpenCacheFile(dir->fd.get(), "fifo"));  // and returns: O_NONBLOCK
  EXPECT_FALSE(OpenCacheFile(dir->fd.get(), "open"));
  EXPECT_FALSE(OpenCacheFile(dir->fd.get(), "../secret"));
  Touch(At("sample/theirs"), "theirs", time(nullptr));
  if (GiveAway(At("sample/theirs"))) {
    EXPECT_FALSE(OpenCacheFile(dir->fd.get(), "theirs"));
  }
}

TEST_F(CacheDirTest, AFileWrittenReplacesWhatSatAtItsNameAndNeverWritesThroughIt) {
  auto dir = OpenCacheDirectory(At("sample"));
  ASSERT_TRUE(dir) << dir.error().message;
  Touch(At("victim"), "root's", time(nullptr));
  ASSERT_EQ(chmod(At("victim").c_str(), 0600), 0);
  fs::create_symlink(At("victim"), At("sample/entry"));
  const std::string text = "cached";
  ASSERT_TRUE(WriteCacheFile(dir->fd.get(), "entry", std::as_bytes(std::span(text))));
  std::string victim;
  std::getline(std::ifstream(At("victim")), victim);
  EXPECT_EQ(victim, "root's");
  EXPECT_EQ(fs::status(At("victim")).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_FALSE(fs::is_symlink(At("sample/entry")));
  struct stat st;
  ASSERT_EQ(lstat(At("sample/entry").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  // An uncommitted file leaves nothing behind.
  {
    auto writer = CacheFileWriter::Create(dir->fd.get(), "never");
    ASSERT_TRUE(writer);
    ASSERT_TRUE(writer->Write(std::as_bytes(std::span(text))));
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(At("sample")), {}), 1);
}

TEST_F(CacheDirTest, TrimmingRemovesTheOldAndTheLeastRecentlyUsedPastTheBounds) {
  auto dir = OpenCacheDirectory(At("sample"));
  ASSERT_TRUE(dir) << dir.error().message;
  const time_t now = time(nullptr);
  const std::string kb(1000, 'x');
  Touch(At("sample/ancient.debug"), kb, now - 40 * 24 * 3600);
  Touch(At("sample/a.debug"), kb, now - 300);
  Touch(At("sample/b.debug"), kb, now - 200);
  Touch(At("sample/c.debug"), kb, now - 100);
  Touch(At("sample/new.debug"), kb, now - 500);   // just written, older times
  Touch(At("sample/.0123.tmp"), kb, now - 7200);  // a killed run's
  Touch(At("sample/.4567.tmp"), kb, now);         // a running one's
  Touch(At("sample/x.debug.1234.tmp"), kb, now - 7200);
  Touch(At("sample/other"), kb, now - 90 * 24 * 3600);  // not the cache's
  // "a" used since: its access time.
  {
    auto fd = OpenCacheFile(dir->fd.get(), "a.debug");
    ASSERT_TRUE(fd);
    MarkCacheFileUsed(fd->get());
  }
  TrimCacheDirectory(dir->fd.get(), CacheTrimPolicy{.suffix = ".debug",
                                                    .max_bytes = 3000,
                                                    .max_unused_seconds = 30 * 24 * 3600,
                                                    .keep = "new.debug"});
  EXPECT_FALSE(fs::exists(At("sample/ancient.debug")));
  EXPECT_FALSE(fs::exists(At("sample/b.debug")));  // least recently used
  EXPECT_TRUE(fs::exists(At("sample/a.debug")));
  EXPECT_TRUE(fs::exists(At("sample/c.debug")));
  EXPECT_TRUE(fs::exists(At("sample/new.debug")));
  EXPECT_FALSE(fs::exists(At("sample/.0123.tmp")));
  EXPECT_TRUE(fs::exists(At("sample/.4567.tmp")));
  EXPECT_FALSE(fs::exists(At("sample/x.debug.1234.tmp")));
  EXPECT_TRUE(fs::exists(At("sample/other")));
  // By count.
  TrimCacheDirectory(dir->fd.get(),
                     CacheTrimPolicy{.suffix = ".debug", .max_files = 1, .keep = ""});
  EXPECT_EQ(fs::exists(At("sample/a.debug")) + fs::exists(At("sample/c.debug")) +
                fs::exists(At("sample/new.debug")),
            1);
  EXPECT_TRUE(fs::exists(At("sample/a.debug")));  // the most recently used
}

}  // namespace
}  // namespace sample
