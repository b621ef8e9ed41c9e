#include "libsample/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/symbolizer_test_util.h"

namespace sample {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

class RegularFileTest : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(file_) << "bytes\n"; }
  ScratchDir dir_;
  const std::string file_ = dir_ / "file";
};

TEST_F(RegularFileTest, OpensARegularFileBlocking) {
  auto fd = OpenRegularFile(file_);
  ASSERT_TRUE(fd) << fd.error().message;
  char buffer[6];
  EXPECT_EQ(read(fd->get(), buffer, sizeof(buffer)), 6);
  EXPECT_EQ(fcntl(fd->get(), F_GETFL) & O_NONBLOCK, 0);  // the flag is not handed on
}

TEST_F(RegularFileTest, PreadAllReadsWhatIsThereFromAnOffset) {
  auto fd = OpenRegularFile(file_);
  ASSERT_TRUE(fd) << fd.error().message;
  std::byte buffer[16] = {};
  EXPECT_EQ(PreadAll(fd->get(), std::span(buffer, 6), 0), 6u);
  EXPECT_EQ(static_cast<char>(buffer[0]), 'b');
  EXPECT_EQ(PreadAll(fd->get(), std::span(buffer, 3), 2), 3u);
  EXPECT_EQ(static_cast<char>(buffer[0]), 't');
  EXPECT_EQ(PreadAll(fd->get(), buffer, 0), 6u);  // fewer: the file's end
  EXPECT_EQ(PreadAll(fd->get(), buffer, 100), 0u);
  EXPECT_EQ(PreadAll(-1, buffer, 0), 0u);  // an error
}

TEST_F(RegularFileTest, NeverOpensAFifoADeviceOrADirectory) {
  const std::string fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = OpenRegularFile(fifo);  // would block without a writer
  ASSERT_FALSE(from_fifo);
  EXPECT_EQ(from_fifo.error().message, fifo + ": it is a FIFO, not a regular file");
  auto device = OpenRegularFile("/dev/null");
  ASSERT_FALSE(device);
  EXPECT_THAT(device.error().message, HasSubstr("a character device"));
  auto directory = OpenRegularFile(dir_.path());
  ASSERT_FALSE(directory);
  EXPECT_THAT(directory.error().message, HasSubstr("a directory"));
  auto missing = OpenRegularFile(dir_ / "missing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
}

TEST_F(RegularFileTest, NoFollowRefusesALinkEvenToARegularFile) {
  const std::string link = dir_ / "link";
  ASSERT_EQ(symlink(file_.c_str(), link.c_str()), 0);
  EXPECT_TRUE(OpenRegularFile(link));
  auto refused = OpenRegularFile(link, OpenRegularOptions{.no_follow = true});
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("a symbolic link"));
}

TEST_F(RegularFileTest, OnlyRegularFilesAndHarmlessLinksAreReplaceable) {
  EXPECT_TRUE(CheckReplaceable(file_, "-o"));
  EXPECT_TRUE(CheckReplaceable(dir_ / "missing", "-o"));
  const std::string link = dir_ / "link";
  ASSERT_EQ(symlink(file_.c_str(), link.c_str()), 0);
  EXPECT_TRUE(CheckReplaceable(link, "-o"));  // ours, in a private directory
  auto device = CheckReplaceable("/dev/null", "-o");
  ASSERT_FALSE(device);
  EXPECT_THAT(device.error().message, HasSubstr("-o /dev/null: it is a character device"));
  auto directory = CheckReplaceable(dir_.path(), "-o");
  ASSERT_FALSE(directory);
  EXPECT_THAT(directory.error().message, HasSubstr("a directory"));
}

TEST_F(RegularFileTest, AnotherUsersLinkInAStickyWorldWritableDirectoryIsNotReplaceable) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a link to another user needs root";
  const std::string sticky = dir_ / "sticky";
  ASSERT_EQ(mkdir(sticky.c_str(), 0700), 0);
  ASSERT_EQ(chmod(sticky.c_str(), 01777), 0);
  const std::string link = sticky + "/out";
  ASSERT_EQ(symlink(file_.c_str(), link.c_str()), 0);
  EXPECT_TRUE(CheckReplaceable(link, "-o"));  // root's own link
  ASSERT_EQ(lchown(link.c_str(), 4242, 4242), 0);
  auto refused = CheckReplaceable(link, "-o");
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message,
              HasSubstr("refused: a symbolic link owned by uid 4242, neither this user (uid 0) "
                        "nor root, in " +
                        sticky + ", a directory everyone may create entries in (mode 1777)"));
  // Not sticky, anyone may plant links there all the more.
  ASSERT_EQ(chmod(sticky.c_str(), 0777), 0);
  EXPECT_FALSE(CheckReplaceable(link, "-o"));
  // Only the directory's owner may create entries: its choice.
  ASSERT_EQ(chmod(sticky.c_str(), 0755), 0);
  EXPECT_TRUE(CheckReplaceable(link, "-o"));
}

// The one rule of -o's links and --control's FIFOs, on the directory as
// opened: an entry of another user is refused only where others may create
// entries.
TEST_F(RegularFileTest, AnEntryOfAnotherUserIsPlantedOnlyWhereOthersMayCreateEntries) {
  const std::string sub = dir_ / "sub";
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  auto parent = OpenParentDirectory(sub + "/entry");
  ASSERT_TRUE(parent) << parent.error().message;
  EXPECT_EQ(parent->path, sub);
  EXPECT_EQ(parent->name, "entry");
  EXPECT_TRUE(CheckNotPlanted(*parent, geteuid()));
  EXPECT_TRUE(CheckNotPlanted(*parent, 0));
  EXPECT_TRUE(CheckNotPlanted(*parent, 4242));  // only we could have put it there
  ASSERT_EQ(chmod(sub.c_str(), 0703), 0);
  // Judged on the stat taken when it was opened: open it again.
  EXPECT_TRUE(CheckNotPlanted(*parent, 4242));
  parent = OpenParentDirectory(sub + "/entry");
  ASSERT_TRUE(parent) << parent.error().message;
  auto planted = CheckNotPlanted(*parent, 4242);
  ASSERT_FALSE(planted);
  EXPECT_THAT(planted.error().message, HasSubstr("owned by uid 4242"));
  EXPECT_THAT(planted.error().message, HasSubstr("a directory everyone may create entries in"));
  EXPECT_TRUE(CheckNotPlanted(*parent, geteuid()));
  auto bare = OpenParentDirectory("entry");
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_EQ(bare->path, ".");
  EXPECT_FALSE(OpenParentDirectory(sub + "/"));
  EXPECT_FALSE(OpenParentDirectory(dir_ / "missing/entry"));
}

}  // namespace
}  // namespace sample
