// Tests for Tracefs: locating a (fake) tracefs and telling a tracefs this
// user may not read apart from a missing one. The permission case is
// checked twice: the message built for it (PermissionError, as for any
// user), and Locate run by a forked child that became nobody, which needs
// root to arrange.
#include "libsample/events/tracefs.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sample {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uid_t kNobody = 65534;

// A directory under /tmp that other users can reach (mkdtemp makes it 0700).
class ReachableDir {
 public:
  ReachableDir() {
    std::string pattern = "/tmp/tracefs_test.XXXXXX";
    path_ = mkdtemp(pattern.data());
    chmod(path_.c_str(), 0755);
  }
  ~ReachableDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A fake tracefs at dir/name with one tracepoint, its root directory of
// mode `mode`, as tracefs's is (0700 by default).
std::string MakeTracefs(const fs::path& dir, const std::string& name, mode_t mode) {
  const fs::path root = dir / name;
  fs::create_directories(root / "events/sched/sched_switch");
  std::ofstream(root / "events/sched/sched_switch/id") << "316\n";
  chmod(root.c_str(), mode);
  return root.string();
}

TEST(TracefsTest, LocatesAFakeTreeAndReadsIds) {
  const ReachableDir dir;
  const std::string root = MakeTracefs(dir.path(), "tracing", 0755);
  auto tracefs = Tracefs::Locate(root);
  ASSERT_TRUE(tracefs) << tracefs.error().message;
  EXPECT_EQ(tracefs->TracepointId("sched", "sched_switch"), 316u);

  auto missing = Tracefs::Locate((dir.path() / "nothing").string());
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("has no events/ directory"));
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
}

// What an unprivileged user is told about a root-only tracefs: that it is
// mounted but unreadable to them, and what would let them in; never that it
// is not mounted.
TEST(TracefsTest, PermissionErrorSaysWhoMayReadItAndHow) {
  const ReachableDir dir;
  const std::string root = MakeTracefs(dir.path(), "tracing", 0700);
  const Error error = Tracefs::PermissionError(root);
  EXPECT_EQ(error.sys_errno, EACCES);
  EXPECT_THAT(error.message, HasSubstr("tracefs is mounted at " + root + " (mode"));
  EXPECT_THAT(error.message, HasSubstr("permission denied"));
  EXPECT_THAT(error.message,
              HasSubstr(" (mode 0700, owner uid " + std::to_string(geteuid()) + ")"));
  EXPECT_THAT(error.message, HasSubstr("run as root"));
  EXPECT_THAT(error.message, HasSubstr("'sudo chmod 755 " + root + "'"));
  EXPECT_THAT(error.message, HasSubstr("'sudo mount -o remount,mode=755 " + root + "'"));
  EXPECT_THAT(error.message, HasSubstr("kernel.perf_event_paranoid 1 or lower"));
  EXPECT_THAT(error.message, HasSubstr("CAP_PERFMON"));
  EXPECT_THAT(error.message, Not(HasSubstr("not mounted")));
}

// Run as nobody, Locate reports a 0700 tracefs as unreadable (EACCES) and
// a directory without events/ as such.
TEST(TracefsTest, LocateAsAnotherUserTellsUnreadableFromMissing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to look at a tracefs as another user";
  const ReachableDir dir;
  const std::string locked = MakeTracefs(dir.path(), "locked", 0700);
  const std::string empty = (dir.path() / "empty").string();
  fs::create_directories(empty);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    if (setresgid(kNobody, kNobody, kNobody) != 0 || setresuid(kNobody, kNobody, kNobody) != 0) {
      _exit(2);
    }
    auto unreadable = Tracefs::Locate(locked);
    auto missing = Tracefs::Locate(empty);
    if (unreadable || missing) _exit(3);
    const std::string report =
        fmt::format("{}\n{}\n{}\n{}\n", unreadable.error().sys_errno, unreadable.error().message,
                    missing.error().sys_errno, missing.error().message);
    const bool written =
        write(pipe_fds[1], report.data(), report.size()) == static_cast<ssize_t>(report.size());
    _exit(written ? 0 : 4);
  }
  close(pipe_fds[1]);
  std::string report;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) report.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "2: could not become nobody, 3: Locate succeeded, "
                                       "4: could not write the report";
  std::istringstream in(report);
  std::string unreadable_errno, unreadable, missing_errno, missing;
  std::getline(in, unreadable_errno);
  std::getline(in, unreadable);
  std::getline(in, missing_errno);
  std::getline(in, missing);
  EXPECT_EQ(unreadable_errno, std::to_string(EACCES));
  EXPECT_THAT(unreadable, HasSubstr("tracefs is mounted at " + locked));
  EXPECT_THAT(unreadable, HasSubstr("this user (uid 65534) may not read it: permission denied"));
  EXPECT_THAT(unreadable, Not(HasSubstr("no events/")));
  EXPECT_EQ(missing_errno, std::to_string(ENOENT));
  EXPECT_THAT(missing, HasSubstr(empty + " has no events/ directory"));
}

}  // namespace
}  // namespace sample
