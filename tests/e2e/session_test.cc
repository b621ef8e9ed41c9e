// End to end: what a user sees around a recording: the privilege fallbacks
// and advice of an unprivileged user, the live status line on a terminal
// (and its absence otherwise), and --list-events.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;
constexpr const char* kPrlimit = "/usr/bin/prlimit";
constexpr const char* kScript = "/usr/bin/script";

int Paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int level = -99;
  in >> level;
  return level;
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The unprivileged runs write their files here.
    chmod(dir_.path().c_str(), 0777);
  }
  // A copy of the executable `path` that nobody can run: the checkout, and
  // so the build, may be in a directory other users cannot enter (a 0700
  // mktemp directory or home).
  std::string ForNobody(const std::string& path) {
    const std::string copy = dir_ / std::filesystem::path(path).filename().string();
    std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
    chmod(copy.c_str(), 0755);
    return copy;
  }
  // Skips unless root can drop to nobody and paranoid is at Debian's 2.
  bool CanTestUnprivileged() {
    if (geteuid() != 0 || access(kSetpriv, X_OK) != 0) {
      return false;
    }
    return Paranoid() >= 2;
  }
  ScratchDir dir_;
};

TEST_F(SessionTest, UnprivilegedUserRecordsUserSpaceOnlyWithANote) {
  if (!CanTestUnprivileged()) {
    GTEST_SKIP() << "needs root, " << kSetpriv << " and perf_event_paranoid >= 2 (it is "
                 << Paranoid() << ")";
  }
  const std::string data = dir_ / "user.data";
  const std::string split = ForNobody(kSplit);
  const RunResult rec = RunTool(
      AsNobody({ForNobody(kRecord), "-e", "cpu-clock", "-o", data, "--", split, "0.3"}), dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_NE(rec.err.find("recording user space only"), std::string::npos) << rec.err;
  EXPECT_EQ(std::count(rec.err.begin(), rec.err.end(), '\n'), 3)
      << "one note, what was embedded, one summary\n"
      << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--no-children"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_GT(SampleCount(rep.out), 100) << rep.out;
  EXPECT_EQ(rep.out.find("[k]"), std::string::npos) << "no kernel frames\n" << rep.out;
  // Symbolized: the workload's own functions are there.
  EXPECT_TRUE(OverheadOf(rep.out, "compute_sixty")) << rep.out;
}

// The kernel lets a user holding CAP_PERFMON or CAP_SYS_ADMIN profile the
// kernel whatever perf_event_paranoid says, so the recorder must neither
// exclude it nor advise getting the capability it has.
TEST_F(SessionTest, UnprivilegedUserWithCapPerfmonRecordsTheKernel) {
  if (!CanTestUnprivileged()) {
    GTEST_SKIP() << "needs root, " << kSetpriv << " and perf_event_paranoid >= 2 (it is "
                 << Paranoid() << ")";
  }
  const std::string record = ForNobody(kRecord);
  const std::string split = ForNobody(kSplit);
  for (const std::string capability : {"perfmon", "sys_admin"}) {
    SCOPED_TRACE(capability);
    // Whether setpriv can grant it is tried on /bin/true: a recorder that
    // fails (or exits 127) must fail the test, not pass for setpriv's.
    const RunResult granted = RunTool(AsNobody({"/bin/true"}, capability), dir_);
    if (granted.exit_code != 0) {
      GTEST_SKIP() << "setpriv cannot grant " << capability << ": " << granted.err;
    }
    const std::string data = dir_ / (capability + ".data");
    const RunResult rec = RunTool(
        AsNobody({record, "-e", "cpu-clock", "-o", data, "--", split, "0.2"}, capability), dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    EXPECT_EQ(rec.err.find("user space only"), std::string::npos) << rec.err;
    EXPECT_EQ(rec.err.find("CAP_PERFMON"), std::string::npos) << rec.err;
    // /proc/kallsyms may still hide addresses (that takes CAP_SYSLOG): the
    // note must not send the user after a setting that is already right.
    if (rec.err.find("hides addresses") != std::string::npos) {
      EXPECT_NE(rec.err.find("CAP_SYSLOG"), std::string::npos) << rec.err;
    }
    const RunResult header =
        RunTool({kReport, "-i", data, "--header-only", "--format", "json"}, dir_);
    ASSERT_EQ(header.exit_code, 0) << header.err;
    EXPECT_NE(header.out.find("\"exclude_kernel\": false"), std::string::npos) << header.out;
    EXPECT_EQ(header.out.find("\"exclude_kernel\": true"), std::string::npos) << header.out;
  }
}

// The privilege model docs/RELIABILITY.md gives for unprivileged use: file
// capabilities on sample-record (`setcap cap_perfmon,cap_sys_ptrace+ep`), no
// ambient ones. A user then records the kernel too, and attaches to a
// process of another user (root's), which CAP_SYS_PTRACE allows.
TEST_F(SessionTest, SetcapOnTheRecorderGivesAnUnprivilegedUserTheKernelAndOtherUsers) {
  constexpr const char* kSetcap = "/usr/sbin/setcap";
  if (!CanTestUnprivileged() || access(kSetcap, X_OK) != 0) {
    GTEST_SKIP() << "needs root, " << kSetpriv << ", " << kSetcap
                 << " and perf_event_paranoid >= 2 (it is " << Paranoid() << ")";
  }
  const std::string record = ForNobody(kRecord);
  // Root's process, recorded by nobody: refused without CAP_SYS_PTRACE, and
  // the advice says so (no paranoid level would help).
  const pid_t target = Start({kSplit, "3"}, dir_, "target");
  const std::string attached = dir_ / "attached.data";
  const std::vector<std::string> attach_argv =
      AsNobody({record, "-e", "cpu-clock", "-p", std::to_string(target), "--duration", "0.3", "-o",
                attached});
  const RunResult refused = RunTool(attach_argv, dir_);
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("belongs to uid 0, not to you (uid 65534)"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("CAP_SYS_PTRACE"), std::string::npos) << refused.err;

  const RunResult setcap = RunTool({kSetcap, "cap_perfmon,cap_sys_ptrace+ep", record}, dir_);
  if (setcap.exit_code != 0) {
    kill(target, SIGKILL);
    Wait(target, dir_, "target");
    GTEST_SKIP() << "this file system takes no file capabilities: " << setcap.err;
  }
  const std::string data = dir_ / "setcap.data";
  const RunResult rec = RunTool(
      AsNobody({record, "-e", "cpu-clock", "-o", data, "--", ForNobody(kSplit), "0.2"}), dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_EQ(rec.err.find("user space only"), std::string::npos) << rec.err;
  const RunResult header =
      RunTool({kReport, "-i", data, "--header-only", "--format", "json"}, dir_);
  EXPECT_NE(header.out.find("\"exclude_kernel\": false"), std::string::npos) << header.out;

  // Now the same attach goes through.
  const RunResult attach = RunTool(attach_argv, dir_);
  kill(target, SIGKILL);
  Wait(target, dir_, "target");
  ASSERT_EQ(attach.exit_code, 0) << attach.err;
  const RunResult report = RunTool({kReport, "-i", attached, "--sort", "sym"}, dir_);
  EXPECT_NE(report.out.find("compute_sixty"), std::string::npos) << report.out << report.err;
}

TEST_F(SessionTest, UnprivilegedSystemWideRecordingExplainsParanoid) {
  if (!CanTestUnprivileged()) {
    GTEST_SKIP() << "needs root, " << kSetpriv << " and perf_event_paranoid >= 2 (it is "
                 << Paranoid() << ")";
  }
  const RunResult rec = RunTool(AsNobody({ForNobody(kRecord), "-a", "-e", "cpu-clock", "--duration",
                                          "0.2", "-o", dir_ / "a.data"}),
                                dir_);
  EXPECT_NE(rec.exit_code, 0);
  EXPECT_NE(rec.err.find("Permission denied"), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("sysctl -w kernel.perf_event_paranoid=0"), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("CAP_PERFMON"), std::string::npos) << rec.err;
}

TEST_F(SessionTest, RingBufferOverTheLockLimitSuggestsDashM) {
  if (!CanTestUnprivileged() || access(kPrlimit, X_OK) != 0) {
    GTEST_SKIP() << "needs root, setpriv, prlimit and perf_event_paranoid >= 2";
  }
  // 4 MiB per CPU is far above perf_event_mlock_kb (516 KiB) plus 64 KiB.
  std::vector<std::string> argv = AsNobody({ForNobody(kRecord), "-m", "1024", "-e", "cpu-clock",
                                            "-o", dir_ / "m.data", "--", ForNobody(kSplit), "0.1"});
  argv.insert(argv.begin(), {kPrlimit, "--memlock=65536:65536", "--"});
  const RunResult rec = RunTool(argv, dir_);
  EXPECT_NE(rec.exit_code, 0);
  EXPECT_NE(rec.err.find("mmap of a 4096 KiB perf ring buffer failed"), std::string::npos)
      << rec.err;
  EXPECT_NE(rec.err.find("ulimit -l: 64 KiB"), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("fewer pages with -m"), std::string::npos) << rec.err;
}

// On a terminal the status line is redrawn in place (\r), at most twice a
// second; into a pipe there is none.
TEST_F(SessionTest, StatusLineOnlyOnATerminal) {
  if (access(kScript, X_OK) != 0) GTEST_SKIP() << "needs " << kScript << " for a pseudo-terminal";
  const std::string data = dir_ / "tty.data";
  const std::string command = ShellQuote(kRecord) + " -e cpu-clock -F 1000 -o " + ShellQuote(data) +
                              " -- " + ShellQuote(kSplit) + " 1.6 >/dev/null";
  const RunResult tty = RunTool({kScript, "-qefc", command, "/dev/null"}, dir_);
  ASSERT_EQ(tty.exit_code, 0) << tty.out << tty.err;
  const std::regex update(
      "\r\\[ recording: ([0-9.]+) s, [0-9]+ samples, [0-9]+ lost, [^\\]]+ "
      "written \\]");
  std::vector<double> times;
  for (std::sregex_iterator it(tty.out.begin(), tty.out.end(), update), end; it != end; ++it) {
    times.push_back(std::stod((*it)[1]));
  }
  EXPECT_GE(times.size(), 2u) << tty.out;
  // At most twice a second, by the recording's own clock, which the line
  // shows: on a loaded machine the 1.6 s of CPU take longer and rightly
  // get more lines, so their count is no bound. Shown to 0.1 s, half a
  // second apart can read as 0.4.
  for (size_t i = 1; i < times.size(); ++i) {
    EXPECT_GE(times[i] - times[i - 1], 0.35) << "update " << i << "\n" << tty.out;
  }
  EXPECT_NE(tty.out.find("[ sample-record: "), std::string::npos) << tty.out;

  const RunResult piped =
      RunTool({kRecord, "-e", "cpu-clock", "-o", dir_ / "pipe.data", "--", kSplit, "0.6"}, dir_);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err.find("recording:"), std::string::npos) << piped.err;
  EXPECT_EQ(piped.err.find('\r'), std::string::npos) << piped.err;
  // -q silences the closing summary as well.
  const RunResult quiet = RunTool(
      {kRecord, "-q", "-e", "cpu-clock", "-o", dir_ / "quiet.data", "--", kSplit, "0.2"}, dir_);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");

  // Every output shows what it holds: rotating files their bytes written
  // (the line once read the single file's writer, which they have not),
  // the flight recorder its memory.
  for (const char* output : {"--switch-output=1s", "--flight-recorder=5"}) {
    const std::string each = ShellQuote(kRecord) + " -e cpu-clock -F 1000 " + output + " -o " +
                             ShellQuote(dir_ / "each.data") + " -- " + ShellQuote(kSplit) +
                             " 1.2 >/dev/null";
    const RunResult shown = RunTool({kScript, "-qefc", each, "/dev/null"}, dir_);
    ASSERT_EQ(shown.exit_code, 0) << output << "\n" << shown.out << shown.err;
    const std::string held = output[2] == 's' ? " written ]" : " in memory ]";
    EXPECT_NE(shown.out.find(held), std::string::npos) << output << "\n" << shown.out;
  }
}

TEST_F(SessionTest, ListEventsShowsWhatOpensHere) {
  const RunResult list = RunTool({kRecord, "--list-events"}, dir_);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const auto lines = Lines(list.out);
  for (const char* name : {"cpu-clock", "task-clock", "page-faults", "context-switches", "dummy"}) {
    EXPECT_NE(std::find(lines.begin(), lines.end(), name), lines.end()) << name << "\n" << list.out;
  }
  // Hardware events are listed only when they open; tracepoints only on request.
  struct stat st {};
  if (stat("/sys/bus/event_source/devices/cpu", &st) != 0) {
    EXPECT_EQ(std::find(lines.begin(), lines.end(), "cycles"), lines.end()) << list.out;
  }
  EXPECT_EQ(list.out.find("sched:sched_switch"), std::string::npos) << list.out;
  // PMUs whose events need an id, address or path are not listed bare (the
  // kernel refuses "pmu//"); their syntax is, where this kernel has them.
  for (const char* bare : {"tracepoint//", "breakpoint//", "uprobe//", "kprobe//"}) {
    EXPECT_EQ(std::find(lines.begin(), lines.end(), bare), lines.end()) << bare << "\n" << list.out;
  }
  const auto has_form = [&](const std::string& syntax) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& line) { return line.starts_with(syntax + " "); });
  };
  const std::string devices = "/sys/bus/event_source/devices/";
  const std::pair<const char*, const char*> forms[] = {{"tracepoint", "SUBSYSTEM:EVENT"},
                                                       {"breakpoint", "mem:ADDR[/LEN][:rwx]"},
                                                       {"uprobe", "uprobe:PATH:SYMBOL[+OFFSET]"},
                                                       {"uprobe", "uretprobe:PATH:SYMBOL"}};
  for (const auto& [pmu, syntax] : forms) {
    EXPECT_EQ(has_form(syntax), stat((devices + pmu).c_str(), &st) == 0) << syntax << "\n"
                                                                         << list.out;
  }

  if (stat("/sys/kernel/tracing/events/sched", &st) != 0 &&
      stat("/sys/kernel/debug/tracing/events/sched", &st) != 0) {
    GTEST_SKIP() << "tracefs is not mounted: no tracepoints to list";
  }
  const RunResult glob = RunTool({kRecord, "--list-events", "sched:sched_sw*"}, dir_);
  ASSERT_EQ(glob.exit_code, 0) << glob.err;
  const auto glob_lines = Lines(glob.out);
  EXPECT_NE(std::find(glob_lines.begin(), glob_lines.end(), "sched:sched_switch"), glob_lines.end())
      << glob.out;
  EXPECT_EQ(glob.out.find("sched:sched_wakeup"), std::string::npos) << glob.out;
  EXPECT_EQ(glob.out.find("cpu-clock"), std::string::npos) << "a pattern filters every kind";
}

// A pattern fnmatch would take literally (an unclosed '[') is refused, and
// one that matches nothing says so: both printed nothing, with exit 0.
TEST_F(SessionTest, ListEventsRefusesBadPatternsAndSaysWhenNothingMatches) {
  const RunResult bad = RunTool({kRecord, "--list-events", "["}, dir_);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(bad.err, "sample-record: --list-events '[': the '[' at 1 is never closed\n");
  const RunResult none = RunTool({kRecord, "--list-events", "no-such-event*"}, dir_);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err, "sample-record: --list-events: no event matches 'no-such-event*'\n");
  const RunResult clocks = RunTool({kRecord, "--list-events", "*-clock"}, dir_);
  EXPECT_EQ(clocks.exit_code, 0) << clocks.err;
  EXPECT_EQ(clocks.out, "cpu-clock\ntask-clock\n");
}

}  // namespace
}  // namespace sample::e2e
