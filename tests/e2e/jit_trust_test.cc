// End to end: the JIT files and the control FIFO root's recorder and a
// report trust (issue 56, items 2 and 7). Each test performs the attack as
// a second user (nobody, through setpriv) where one is needed:
//  - nobody, in a user and mount namespace of their own, bind-mounts a
//    root-only file over a JIT's /tmp/perf-PID.map; root records the JIT:
//    the file's text must be in no byte of the recording's perf maps nor of
//    the report, and the refusal is noted;
//  - a jitdump anyone may write, or another user's, is not copied;
//  - nobody's FIFO in a sticky world-writable directory, or a FIFO anyone
//    may write, is refused as --control's control or answer FIFO;
//  - a report falls back to this host's perf map only if it is the
//    recorded process's user's (a reused pid's map of root's JIT is not).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/sample_file_reader.h"
#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

namespace fs = std::filesystem;

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kJit = WORKLOAD_JIT_PATH;
const std::string kJitDump = WORKLOAD_JITDUMP_PATH;

constexpr uid_t kNobody = 65534;

// Removes a file another user's process left in /tmp.
struct Remover {
  std::string path;
  ~Remover() {
    if (!path.empty()) unlink(path.c_str());
  }
};

class JitTrustTest : public ::testing::Test {
 protected:
  // The report's text in the views that print names: the flat profile by
  // symbol and --script, stdout and stderr.
  std::string ReportText(const std::string& data) {
    std::string all;
    for (const std::vector<std::string>& view :
         {std::vector<std::string>{"--sort", "sym"}, std::vector<std::string>{"--script"}}) {
      std::vector<std::string> argv = {kReport, "-i", data};
      argv.insert(argv.end(), view.begin(), view.end());
      const RunResult r = RunTool(argv, dir_);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      all += r.out + r.err;
    }
    return all;
  }

  ScratchDir dir_;
};

// Issue 56, item 2: perf maps were taken when "owned by the process's user
// or root", opened in the process's mount namespace, so a root-only file a
// user bind-mounted over the path there was copied into root's recording.
TEST_F(JitTrustTest, RootCopiesNoFileAUserBindMountedOverAPerfMap) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the fake JIT writes x86-64 machine code";
#endif
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the attack is on root's recorder";
  NobodyDir nobody;
  ASSERT_FALSE(nobody.path().empty()) << "no directory for nobody under /tmp";
  const RunResult probe = RunTool(AsNobody({"/usr/bin/unshare", "-Urm", "true"}), dir_);
  if (probe.exit_code != 0) {
    GTEST_SKIP() << "unprivileged user namespaces do not work here: " << probe.err;
  }
  ASSERT_TRUE(nobody.Copy(kJit, "jit"));
  // Root's secret, in a map's syntax so that it would name every address.
  const std::string marker = "sample_secret_" + std::to_string(getpid());
  const std::string secret = nobody.path() + "/secret";
  std::ofstream(secret) << "0 7fffffffffff " << marker << "\n";
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  const std::string pid_file = nobody.path() + "/pid";
  // As nobody, in their namespace: the JIT writes its map, the map is
  // covered by the secret, the JIT runs on until the recorder reads it.
  // 2 s: the recorder pins the namespace when it drains the process's
  // first mapping; with 1 s, on a loaded machine, that likely came after the
  // JIT ended once: the host's map was read and the note not said (a CI
  // run beside three other test runs).
  const std::string script =
      ShellQuote(nobody.path() + "/jit") + " 2.0 >/dev/null & pid=$!; i=0; " +
      "while [ ! -s /tmp/perf-$pid.map ]; do sleep 0.01; i=$((i+1)); " +
      "[ $i -gt 2000 ] && exit 7; done; mount --bind " + ShellQuote(secret) +
      " /tmp/perf-$pid.map || exit 8; echo $pid > " + ShellQuote(pid_file) + "; wait $pid";
  const std::string data = dir_ / "bound.data";
  std::vector<std::string> argv = {kRecord, "-e", "cpu-clock", "-o", data, "--"};
  const std::vector<std::string> command =
      AsNobody({"/usr/bin/unshare", "-Urm", "/bin/sh", "-c", script});
  argv.insert(argv.end(), command.begin(), command.end());
  const RunResult rec = RunTool(argv, dir_);
  std::string pid;
  std::ifstream(pid_file) >> pid;
  Remover map{pid.empty() ? "" : "/tmp/perf-" + pid + ".map"};  // nobody's own, on the host
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  ASSERT_FALSE(pid.empty()) << "the JIT's pid was not written";

  const std::string note =
      "/tmp/perf-" + pid + ".map: ignored: owned by uid 0, not by the process's user (uid 65534)";
  EXPECT_NE(rec.err.find(note), std::string::npos) << rec.err;
  EXPECT_EQ(rec.err.find(marker), std::string::npos) << rec.err;
  auto reader = format::SampleFileReader::Open(data);
  ASSERT_TRUE(reader) << reader.error().message;
  for (const RecordedPerfMap& recorded : reader->perf_maps()) {
    EXPECT_EQ(recorded.text.find(marker), std::string::npos) << "pid " << recorded.pid;
  }
  EXPECT_EQ(ReportText(data).find(marker), std::string::npos);
}

// Issue 56, item 7: jitdumps were read whatever their owner or mode.
TEST_F(JitTrustTest, JitdumpAnyoneMayWriteIsNotCopied) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the fake JIT writes x86-64 machine code";
#endif
  // The writer's open(O_CREAT | O_TRUNC) keeps the mode of the file that
  // is there: 0666, as a JIT run with umask 0 leaves it.
  const std::string script = "touch " + ShellQuote(dir_.path()) + "/jit-$$.dump && chmod 666 " +
                             ShellQuote(dir_.path()) + "/jit-$$.dump && exec " +
                             ShellQuote(kJitDump) + " 0.5 " + ShellQuote(dir_.path());
  const std::string data = dir_ / "writable.data";
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "-o", data, "--", "/bin/sh", "-c", script}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_NE(rec.err.find(".dump: ignored: writable by everyone (mode 0666)"), std::string::npos)
      << rec.err;
  auto reader = format::SampleFileReader::Open(data);
  ASSERT_TRUE(reader) << reader.error().message;
  EXPECT_TRUE(reader->jit_dumps().empty());
  EXPECT_EQ(ReportText(data).find("jit_seventy"), std::string::npos);
}

TEST_F(JitTrustTest, JitdumpOfAnotherUserIsNotCopied) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the fake JIT writes x86-64 machine code";
#endif
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  // Root's JIT writes into a dump nobody made (and can rewrite).
  const std::string script = "touch " + ShellQuote(dir_.path()) + "/jit-$$.dump && chown " +
                             std::to_string(kNobody) + " " + ShellQuote(dir_.path()) +
                             "/jit-$$.dump && exec " + ShellQuote(kJitDump) + " 0.5 " +
                             ShellQuote(dir_.path());
  const std::string data = dir_ / "others.data";
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock", "-o", data, "--", "/bin/sh", "-c", script}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_NE(rec.err.find(".dump: ignored: owned by uid 65534, not by the process's user (uid 0)"),
            std::string::npos)
      << rec.err;
  auto reader = format::SampleFileReader::Open(data);
  ASSERT_TRUE(reader) << reader.error().message;
  EXPECT_TRUE(reader->jit_dumps().empty());
  EXPECT_EQ(ReportText(data).find("jit_seventy"), std::string::npos);
}

// Issue 56, item 7: another user's FIFO in a sticky directory steered
// root's recording (her `disable` halved it).
TEST_F(JitTrustTest, ControlFifoOfAnotherUserOrAnyoneIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: nobody's FIFO must be another user's";
  NobodyDir nobody;
  ASSERT_FALSE(nobody.path().empty()) << "no directory for nobody under /tmp";
  const std::string sticky = nobody.path() + "/sticky";
  ASSERT_TRUE(fs::create_directory(sticky));
  ASSERT_EQ(chmod(sticky.c_str(), 01777), 0);
  const std::string hers = sticky + "/ctl";
  const RunResult made = RunTool(AsNobody({"/usr/bin/mkfifo", "-m", "0600", hers}), dir_);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string ours = sticky + "/own";
  ASSERT_EQ(mkfifo(ours.c_str(), 0600), 0);
  const std::string anyone = sticky + "/anyone";
  ASSERT_EQ(mkfifo(anyone.c_str(), 0600), 0);
  ASSERT_EQ(chmod(anyone.c_str(), 0622), 0);
  auto record = [&](const std::string& spec) {
    return RunTool({kRecord, "-e", "cpu-clock", "-o", dir_ / "fifo.data", "--control", spec, "--",
                    "/bin/true"},
                   dir_);
  };
  const RunResult control = record("fifo:" + hers);
  EXPECT_NE(control.exit_code, 0);
  EXPECT_NE(control.err.find("control FIFO " + hers + ": refused: owned by uid 65534"),
            std::string::npos)
      << control.err;
  const RunResult ack = record("fifo:" + ours + "," + hers);
  EXPECT_NE(ack.exit_code, 0);
  EXPECT_NE(ack.err.find("acknowledgement FIFO " + hers + ": refused: owned by uid 65534"),
            std::string::npos)
      << ack.err;
  const RunResult writable = record("fifo:" + anyone);
  EXPECT_NE(writable.exit_code, 0);
  EXPECT_NE(writable.err.find(anyone + ": refused: writable by everyone (mode 0622"),
            std::string::npos)
      << writable.err;
  // Our own FIFO there is ours to use.
  const RunResult own = record("fifo:" + ours);
  EXPECT_EQ(own.exit_code, 0) << own.err;
}

// Issue 56, item 7: a recording without a copy of a JIT's map (--no-embed)
// is named from this host's /tmp/perf-PID.map, which after the pid was
// reused may be another process's: root's JIT's names on nobody's code.
TEST_F(JitTrustTest, ReportReadsThisHostsMapOnlyOfTheRecordedProcessUser) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the fake JIT writes x86-64 machine code";
#endif
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the JIT runs as another user";
  NobodyDir nobody;
  ASSERT_FALSE(nobody.path().empty()) << "no directory for nobody under /tmp";
  ASSERT_TRUE(nobody.Copy(kJit, "jit"));
  const std::string data = dir_ / "noembed.data";
  std::vector<std::string> argv = {kRecord, "-e", "cpu-clock", "--no-embed", "-o", data, "--"};
  const std::vector<std::string> command = AsNobody({nobody.path() + "/jit", "0.3"});
  argv.insert(argv.end(), command.begin(), command.end());
  const RunResult rec = RunTool(argv, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::string map = Lines(rec.out).at(0);
  ASSERT_TRUE(map.starts_with("/tmp/perf-")) << rec.out;
  Remover remove_map{map};
  // The JIT's own map, nobody's: it names nobody's code for root's report.
  const RunResult own = RunTool({kReport, "-i", data, "--sort", "sym"}, dir_);
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(own.out.find("jit_countdown"), std::string::npos) << own.out << own.err;

  // The pid reused by root's JIT, whose map is there now.
  ASSERT_EQ(unlink(map.c_str()), 0);
  std::ofstream(map) << "0 7fffffffffff root_jit_function\n";
  ASSERT_EQ(chmod(map.c_str(), 0644), 0);
  const std::string text = ReportText(data);
  EXPECT_EQ(text.find("root_jit_function"), std::string::npos) << text;
  EXPECT_NE(text.find(map + ": ignored: owned by uid 0, not by the process's user (uid 65534)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace sample::e2e
