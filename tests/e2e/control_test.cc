// End to end: runtime control. A recording started disabled (-D -1) and
// switched through --control FIFOs by the workload itself (tests/workloads/
// phases.c: phase_a, enable, phase_b, disable, phase_c, each switch waiting
// for the recorder's "ack"), so the recorded samples are phase_b's only,
// whatever the machine's speed; one event of two switched by name; a
// controller outside the command (this test) with refused commands and
// "stop"; and the options refused by name.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kPhases = WORKLOAD_PHASES_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;

// The "samples = N" of the header's line for `event`, or -1.
long EventSamples(const std::string& header, const std::string& event) {
  const std::regex line("# event +: name = " + event + ", [^\n]*samples = ([0-9]+)");
  std::smatch m;
  if (std::regex_search(header, m, line)) return std::stol(m[1]);
  return -1;
}

class ControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mkfifo(ctl_.c_str(), 0600), 0);
    ASSERT_EQ(mkfifo(ack_.c_str(), 0600), 0);
  }
  std::string Control() const { return "fifo:" + ctl_ + "," + ack_; }

  ScratchDir dir_;
  const std::string ctl_ = dir_ / "ctl";
  const std::string ack_ = dir_ / "ack";
  const std::string data_ = dir_ / "control.data";
};

TEST_F(ControlTest, ProgramEnablesAndDisablesItsOwnRecording) {
  const RunResult rec = RunTool({kRecord, "-e", "cpu-clock", "-D", "-1", "--control", Control(),
                                 "-o", data_, "--", kPhases, ctl_, ack_, "0.3"},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_EQ(rec.out, "enable: ack\ndisable: ack\n");
  // Not a terminal: no "recording enabled" lines.
  EXPECT_EQ(rec.err.find("recording enabled"), std::string::npos) << rec.err;

  const RunResult rep = RunTool({kReport, "-i", data_, "--no-children"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_GT(SampleCount(rep.out), 100) << rep.out;
  // The events are switched before the answer: phase_a ran entirely before
  // "enable" was written, phase_c entirely after "disable" was answered.
  EXPECT_GT(OverheadOf(rep.out, "phase_b").value_or(0), 90) << rep.out;
  EXPECT_FALSE(OverheadOf(rep.out, "phase_a")) << rep.out;
  EXPECT_FALSE(OverheadOf(rep.out, "phase_c")) << rep.out;

  const RunResult header = RunTool({kReport, "-i", data_, "--header-only"}, dir_);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  EXPECT_TRUE(
      std::regex_search(header.out, std::regex("# enabled +: 1 window, [0-9.]+ s of [0-9.]+ s\n")))
      << header.out;
  EXPECT_TRUE(std::regex_search(header.out,
                                std::regex("# window +: [0-9.]+ s to [0-9.]+ s \\([0-9.]+ s\\)\n")))
      << header.out;

  // --script marks the switches between the samples: "enable" before the
  // first, "disable" after the last, and the recording's end (everything
  // off) after that.
  const RunResult script = RunTool({kReport, "-i", data_, "--script"}, dir_);
  ASSERT_EQ(script.exit_code, 0) << script.err;
  const std::vector<std::string> lines = Lines(script.out);
  ASSERT_GT(lines.size(), 4u);
  const std::regex mark("# +[0-9]+\\.[0-9]{6}: sampling (enabled|disabled)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines.front(), m, mark)) << lines.front();
  EXPECT_EQ(m[1], "enabled");
  ASSERT_TRUE(std::regex_match(lines[lines.size() - 2], m, mark)) << lines[lines.size() - 2];
  EXPECT_EQ(m[1], "disabled");
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [&](const std::string& l) { return std::regex_match(l, mark); }),
            3);
}

// On a terminal each switch is said, as perf's "Events enabled".
TEST_F(ControlTest, ATerminalIsToldOfEachSwitch) {
  constexpr const char* kScript = "/usr/bin/script";
  if (access(kScript, X_OK) != 0) GTEST_SKIP() << "needs " << kScript << " for a pseudo-terminal";
  const std::string command = ShellQuote(kRecord) + " -e cpu-clock -D -1 --control " +
                              ShellQuote(Control()) + " -o " + ShellQuote(data_) + " -- " +
                              ShellQuote(kPhases) + " " + ShellQuote(ctl_) + " " +
                              ShellQuote(ack_) + " 0.05 'enable cpu-clock'";
  const RunResult tty = RunTool({kScript, "-qefc", command, "/dev/null"}, dir_);
  ASSERT_EQ(tty.exit_code, 0) << tty.out << tty.err;
  EXPECT_NE(tty.out.find("sample-record: recording enabled for cpu-clock\r\n"), std::string::npos)
      << tty.out;
  EXPECT_NE(tty.out.find("sample-record: recording disabled\r\n"), std::string::npos) << tty.out;
}

TEST_F(ControlTest, EnableNameSwitchesOnlyThatEvent) {
  const RunResult rec =
      RunTool({kRecord, "-e", "cpu-clock,task-clock", "-D", "-1", "--control", Control(), "-o",
               data_, "--", kPhases, ctl_, ack_, "0.3", "enable task-clock", "disable"},
              dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_EQ(rec.out, "enable task-clock: ack\ndisable: ack\n");
  const RunResult header = RunTool({kReport, "-i", data_, "--header-only"}, dir_);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  EXPECT_GT(EventSamples(header.out, "task-clock"), 100) << header.out;
  EXPECT_EQ(EventSamples(header.out, "cpu-clock"), 0) << header.out;
  EXPECT_NE(header.out.find("events on: task-clock\n"), std::string::npos) << header.out;
}

// Writes `command` and reads the answer line; "" when none came in 60 s.
std::string Ask(int ctl, int ack, const std::string& command) {
  const std::string line = command + "\n";
  if (write(ctl, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return "";
  std::string answer;
  char c = 0;
  pollfd p{ack, POLLIN, 0};
  while (poll(&p, 1, 60'000) == 1 && read(ack, &c, 1) == 1 && c != '\n') answer += c;
  return answer;
}

TEST_F(ControlTest, ControllerOutsideTheCommandWithRefusedCommandsAndStop) {
  // The command would run for a minute: "stop" ends the recording.
  const pid_t pid =
      Start({kRecord, "-e", "cpu-clock", "--control", Control(), "-o", data_, "--", kSplit, "60"},
            dir_, "rec");
  // Read-write: opening does not wait for the recorder, which holds them.
  const int ctl = open(ctl_.c_str(), O_RDWR);
  const int ack = open(ack_.c_str(), O_RDWR);
  ASSERT_GE(ctl, 0);
  ASSERT_GE(ack, 0);
  EXPECT_EQ(Ask(ctl, ack, "enable nosuch"), "err");
  EXPECT_EQ(Ask(ctl, ack, "frobnicate"), "err");
  EXPECT_EQ(Ask(ctl, ack, "ping"), "ack");
  EXPECT_EQ(Ask(ctl, ack, "disable"), "ack");
  EXPECT_EQ(Ask(ctl, ack, "enable"), "ack");
  EXPECT_EQ(Ask(ctl, ack, "stop"), "ack");
  const RunResult rec = Wait(pid, dir_, "rec");
  close(ctl);
  close(ack);
  EXPECT_EQ(rec.exit_code, 128 + SIGTERM) << "the command's status\n" << rec.err;
  EXPECT_NE(rec.err.find("no event named 'nosuch' (events: cpu-clock)"), std::string::npos)
      << rec.err;
  EXPECT_NE(rec.err.find("unknown command 'frobnicate' ignored"), std::string::npos) << rec.err;

  const RunResult header = RunTool({kReport, "-i", data_, "--header-only"}, dir_);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  // On from the start to "disable", and from "enable" to "stop".
  EXPECT_TRUE(std::regex_search(header.out, std::regex("# enabled +: 2 windows, "))) << header.out;
}

// Each switch is written as it happens: a recorder killed with sampling on
// leaves a file whose window is still there, ending at the last record.
TEST_F(ControlTest, AKilledRecorderKeepsItsWindows) {
  const pid_t pid = Start({kRecord, "-e", "cpu-clock", "-D", "-1", "--control", Control(), "-o",
                           data_, "--", kSplit, "60"},
                          dir_, "rec");
  const int ctl = open(ctl_.c_str(), O_RDWR);
  const int ack = open(ack_.c_str(), O_RDWR);
  ASSERT_GE(ctl, 0);
  ASSERT_GE(ack, 0);
  EXPECT_EQ(Ask(ctl, ack, "enable"), "ack");
  // The writer's thread writes the chunk soon after: wait until a reader
  // sees it (no time limit asserted; the test's own timeout bounds it).
  RunResult header;
  for (int tries = 0; tries < 600; ++tries) {
    header = RunTool({kReport, "-i", data_, "--header-only"}, dir_);
    if (header.out.find("# enabled") != std::string::npos) break;
    usleep(100'000);
  }
  kill(-pid, SIGKILL);  // the recorder and the command, its process group
  Wait(pid, dir_, "rec");
  close(ctl);
  close(ack);
  header = RunTool({kReport, "-i", data_, "--header-only"}, dir_);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  EXPECT_NE(header.out.find("not finalized"), std::string::npos) << header.out;
  EXPECT_TRUE(std::regex_search(header.out, std::regex("# enabled +: 1 window, "))) << header.out;
}

TEST_F(ControlTest, OptionsAreRefusedByName) {
  RunResult r = RunTool({kRecord, "-D", "-1", "-o", data_, "--", kSplit, "0.01"}, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-D -1 starts with sampling disabled"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--control fifo:CTL"), std::string::npos) << r.err;

  r = RunTool({kRecord, "-D", "-2", "--control", Control(), "-o", data_, "--", kSplit, "0.01"},
              dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-D '-2'"), std::string::npos) << r.err;

  const std::string plain = dir_ / "plain";
  RunTool({"/bin/sh", "-c", "echo enable > " + ShellQuote(plain)}, dir_);
  r = RunTool({kRecord, "--control", "fifo:" + plain, "-o", data_, "--", kSplit, "0.01"}, dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(plain + " is not a FIFO"), std::string::npos) << r.err;
  EXPECT_NE(access(data_.c_str(), F_OK), 0) << "no output file for a refused recording";

  // A spec that is not fifo:CTL[,ACK] is a usage error, refused with the
  // other options before anything runs.
  r = RunTool({kRecord, "--control", "fd:3", "-o", data_, "--", kSplit, "0.01"}, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not supported"), std::string::npos) << r.err;

  r = RunTool({kRecord, "--stat", "--control", Control(), "--", kSplit, "0.01"}, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--control is an option of sampling"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sample::e2e
