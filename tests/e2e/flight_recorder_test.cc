// End to end: --flight-recorder. The phases workload in its --mark mode
// (phase_a 1 s, phase_b 2 s, phase_c 3 s of CPU time; it creates a file
// 0.5 s into phase_c) is recorded with a 1 s window; a snapshot taken when
// the file appears (SIGUSR2, or 'snapshot' on the --control FIFO) holds
// phase_c and nothing of phase_a, which ended at least 2.5 s earlier,
// and resolves its symbols (the workload's mappings came long before the
// window). Every view reads it, and the file written at the end exists.
// No time is asserted: the test waits for the workload's cue.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

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

// Waits (without a limit of its own: the test's timeout bounds it) until
// `path` exists or the process `pid` has ended; true when it exists.
bool WaitForFile(const std::string& path, pid_t pid) {
  for (;;) {
    if (access(path.c_str(), F_OK) == 0) return true;
    if (kill(pid, 0) != 0) return false;
    usleep(20'000);
  }
}

// Names in `dir` that start with `prefix`.
std::vector<std::string> FilesStartingWith(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d) return names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  closedir(d);
  return names;
}

// Every view reads `file`; the flat profile holds phase_c and no phase_a.
void ExpectPhaseCOnly(const std::string& file, const ScratchDir& dir) {
  const RunResult rep = RunTool({kReport, "-i", file, "--no-children"}, dir);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_GT(SampleCount(rep.out), 50) << rep.out;
  EXPECT_GT(OverheadOf(rep.out, "phase_c").value_or(0), 20) << rep.out;
  EXPECT_FALSE(OverheadOf(rep.out, "phase_a")) << rep.out;

  const RunResult header = RunTool({kReport, "-i", file, "--header-only"}, dir);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  EXPECT_EQ(header.out.find("not finalized"), std::string::npos) << header.out;
  EXPECT_NE(header.out.find("cpu-clock"), std::string::npos) << header.out;

  const RunResult script = RunTool({kReport, "-i", file, "--script"}, dir);
  ASSERT_EQ(script.exit_code, 0) << script.err;
  EXPECT_NE(script.out.find("phase_c"), std::string::npos);
  EXPECT_EQ(script.out.find("phase_a"), std::string::npos);
  // The kept sideband names the workload's thread.
  EXPECT_NE(script.out.find("phases"), std::string::npos);

  const RunResult folded = RunTool({kReport, "-i", file, "--format", "folded"}, dir);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_NE(folded.out.find("phase_c"), std::string::npos) << folded.out;
  EXPECT_EQ(folded.out.find("phase_a"), std::string::npos) << folded.out;
}

TEST(FlightRecorderTest, SignalSnapshotHoldsTheLastSecondOnly) {
  ScratchDir dir;
  const std::string data = dir / "flight.data";
  const std::string mark = dir / "mark";
  const pid_t pid = Start({kRecord, "-e", "cpu-clock", "-F", "1000", "--flight-recorder=1", "-o",
                           data, "--", kPhases, "--mark", mark},
                          dir, "rec");
  ASSERT_TRUE(WaitForFile(mark, pid)) << "the workload never reached phase_c";
  // Nothing written while recording.
  EXPECT_EQ(access(data.c_str(), F_OK), -1);
  ASSERT_EQ(kill(pid, SIGUSR2), 0);
  const RunResult rec = Wait(pid, dir, "rec");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  const std::vector<std::string> snapshots = FilesStartingWith(dir.path(), "flight.data.2");
  ASSERT_EQ(snapshots.size(), 1u) << rec.err;
  EXPECT_NE(rec.err.find("sample-record: snapshot: " + dir / snapshots[0]), std::string::npos)
      << rec.err;
  EXPECT_NE(rec.err.find("flight recorder: kept the last 1 s in "), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("1 snapshot(s) written before the end"), std::string::npos) << rec.err;
  ExpectPhaseCOnly(dir / snapshots[0], dir);
  // The end's file: the last second of phase_c.
  ExpectPhaseCOnly(data, dir);
}

TEST(FlightRecorderTest, ControlSnapshotIsAnswered) {
  ScratchDir dir;
  const std::string ctl = dir / "ctl", ack = dir / "ack", mark = dir / "mark";
  ASSERT_EQ(mkfifo(ctl.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo(ack.c_str(), 0600), 0);
  const std::string data = dir / "flight.data";
  const pid_t pid =
      Start({kRecord, "-e", "cpu-clock", "-F", "1000", "--flight-recorder=1", "--control",
             "fifo:" + ctl + "," + ack, "-q", "-o", data, "--", kPhases, "--mark", mark},
            dir, "rec");
  const int ctl_fd = open(ctl.c_str(), O_RDWR);
  const int ack_fd = open(ack.c_str(), O_RDWR);
  ASSERT_GE(ctl_fd, 0);
  ASSERT_GE(ack_fd, 0);
  ASSERT_TRUE(WaitForFile(mark, pid));
  ASSERT_EQ(write(ctl_fd, "snapshot\n", 9), 9);
  std::string answer;
  char c = 0;
  pollfd p{ack_fd, POLLIN, 0};
  while (poll(&p, 1, 60'000) == 1 && read(ack_fd, &c, 1) == 1 && c != '\n') answer += c;
  EXPECT_EQ(answer, "ack");
  const RunResult rec = Wait(pid, dir, "rec");
  close(ctl_fd);
  close(ack_fd);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_EQ(rec.err, "");  // -q
  const std::vector<std::string> snapshots = FilesStartingWith(dir.path(), "flight.data.2");
  ASSERT_EQ(snapshots.size(), 1u);
  ExpectPhaseCOnly(dir / snapshots[0], dir);
}

TEST(FlightRecorderTest, SnapshotWithoutFlightRecorderIsRefused) {
  ScratchDir dir;
  const std::string ctl = dir / "ctl", ack = dir / "ack";
  ASSERT_EQ(mkfifo(ctl.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo(ack.c_str(), 0600), 0);
  const pid_t pid = Start({kRecord, "-e", "cpu-clock", "--control", "fifo:" + ctl + "," + ack, "-o",
                           dir / "x.data", "--", kSplit, "60"},
                          dir, "rec");
  const int ctl_fd = open(ctl.c_str(), O_RDWR);
  const int ack_fd = open(ack.c_str(), O_RDWR);
  ASSERT_GE(ctl_fd, 0);
  ASSERT_GE(ack_fd, 0);
  auto ask = [&](const std::string& command) {
    const std::string line = command + "\n";
    if (write(ctl_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      return std::string();
    std::string answer;
    char c = 0;
    pollfd p{ack_fd, POLLIN, 0};
    while (poll(&p, 1, 60'000) == 1 && read(ack_fd, &c, 1) == 1 && c != '\n') answer += c;
    return answer;
  };
  EXPECT_EQ(ask("snapshot"), "err");
  EXPECT_EQ(ask("stop"), "ack");
  const RunResult rec = Wait(pid, dir, "rec");
  close(ctl_fd);
  close(ack_fd);
  EXPECT_NE(rec.err.find("'snapshot' needs --flight-recorder"), std::string::npos) << rec.err;
}

TEST(FlightRecorderTest, WindowOutOfRangeIsRefusedByName) {
  ScratchDir dir;
  for (const char* value : {"0", "-1", "abc", "100000"}) {
    const RunResult r = RunTool({kRecord, std::string("--flight-recorder=") + value, "-o",
                                 dir / "x.data", "--", kSplit, "0.01"},
                                dir);
    EXPECT_EQ(r.exit_code, 2) << value;
    EXPECT_NE(r.err.find("--flight-recorder"), std::string::npos) << value << ": " << r.err;
  }
}

}  // namespace
}  // namespace sample::e2e
