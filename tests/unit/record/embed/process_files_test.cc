// Tests for ProcessFiles' notes of a process's mount namespace, on a fake
// procfs laid out in a scratch directory (PID/ns/mnt a file whose inode
// stands for the namespace, PID/root a directory standing for its root):
// a process noted while it lived keeps its namespace once it is gone, even
// when its exec's record comes after (Renote), which lost it before.
#include "record/embed/process_files.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

namespace sample::record {
namespace {

class ProcessFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    proc_ = ::testing::TempDir() + "process_files_test_proc";
    std::filesystem::remove_all(proc_);
    Make("self/ns/mnt");
    Make("42/ns/mnt");  // another namespace: another inode
    Make("42/root/app/prog", "the container's");
  }
  void TearDown() override { std::filesystem::remove_all(proc_); }

  void Make(const std::string& path, const std::string& text = "") {
    const std::filesystem::path file = std::filesystem::path(proc_) / path;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }

  std::string proc_;
};

TEST_F(ProcessFilesTest, ANamespaceNotedWhileItLivedOutlivesItsProcess) {
  ProcessFiles files(proc_);
  files.Note(42);
  ASSERT_TRUE(files.InOtherNamespace(42));
  EXPECT_EQ(files.pinned(), 1u);
  // The process exits (its /proc entry goes: here its ns/mnt; the pinned
  // root stays, as the kernel keeps it); its exec's COMM is drained after.
  std::filesystem::remove_all(std::filesystem::path(proc_) / "42/ns");
  files.Renote(42);
  EXPECT_TRUE(files.InOtherNamespace(42));
  // Its files are still opened through its (pinned) root.
  auto fd = files.Open(42, "/app/prog");
  ASSERT_TRUE(fd) << fd.error().message;
  char text[32] = {};
  ASSERT_GT(read(fd->get(), text, sizeof(text) - 1), 0);
  EXPECT_STREQ(text, "the container's");
  // A process gone before it was ever noted is ours.
  files.Renote(43);
  EXPECT_FALSE(files.InOtherNamespace(43));
}

}  // namespace
}  // namespace sample::record
