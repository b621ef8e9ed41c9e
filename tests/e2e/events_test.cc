// End to end: event kinds beyond the default timer, recorded and reported.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;
const std::string kHits = WORKLOAD_HITS_PATH;

// How many times the hits workload calls hit(): one write(2), one store to
// `watched` each, and nothing else in it writes or stores there.
constexpr long kHitCount = 1000;

class EventsTest : public ::testing::Test {
 protected:
  // Records `event` on `hits kHitCount` with no -c or -F and returns the
  // report's sample count; fails (and returns -1) if either tool does.
  long SamplesOfHits(const std::string& event, RunResult* rec_out = nullptr) {
    const std::string data = dir_ / "hits.data";
    const RunResult rec =
        RunTool({kRecord, "-e", event, "-o", data, "--", kHits, std::to_string(kHitCount)}, dir_);
    if (rec_out != nullptr) *rec_out = rec;
    if (rec.exit_code != 0) return -1;
    const RunResult rep = RunTool({kReport, "-i", data, "--sort", "sym"}, dir_);
    EXPECT_EQ(rep.exit_code, 0) << rep.err;
    EXPECT_NE(rep.out.find("of event '" + event + "'"), std::string::npos) << rep.out;
    return SampleCount(rep.out);
  }

  ScratchDir dir_;
};

// Events that count occurrences sample every one by default (period 1), as
// perf does, not 4,000 times a second: at 4 kHz a thousand quick writes
// left 6 samples.
TEST_F(EventsTest, TracepointSamplesEveryHitByDefault) {
  if (const std::string why = TracepointUnavailable("syscalls", "sys_enter_write"); !why.empty()) {
    GTEST_SKIP() << why;
  }
  RunResult rec;
  const long samples = SamplesOfHits("syscalls:sys_enter_write", &rec);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_EQ(samples, kHitCount);
}

TEST_F(EventsTest, UprobeSamplesEveryCallByDefault) {
  RunResult rec;
  EXPECT_EQ(SamplesOfHits("uprobe:" + kHits + ":hit", &rec), kHitCount) << rec.err;
}

TEST_F(EventsTest, UretprobeSamplesEveryReturnByDefault) {
  RunResult rec;
  EXPECT_EQ(SamplesOfHits("uretprobe:" + kHits + ":hit", &rec), kHitCount) << rec.err;
}

TEST_F(EventsTest, WatchpointSamplesEveryStoreByDefault) {
  // Not PIE: the address printed by one run is the one of the next.
  const RunResult where = RunTool({kHits, "address"}, dir_);
  ASSERT_EQ(where.exit_code, 0) << where.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(where.out, m, std::regex("0x[0-9a-f]+"))) << where.out;
  // Some machines have no breakpoints, and some VMs never deliver their
  // hits (perf counts 0 there too): a breakpoint the test opens on its own
  // variable says which, not the recorder under test.
  if (const std::string why = BreakpointUnavailable(); !why.empty()) GTEST_SKIP() << why;
  RunResult rec;
  const long samples = SamplesOfHits("mem:" + m[0].str() + ":w", &rec);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_EQ(samples, kHitCount);
}

// A uprobe with period 1 samples every call: the count equals the calls
// the workload says it made.
TEST_F(EventsTest, UprobeCountsEveryCall) {
  setenv("SPLIT_PRINT_ROUNDS", "1", 1);
  const std::string data = dir_ / "uprobe.data";
  const RunResult rec = RunTool({kRecord, "-e", "uprobe:" + kSplit + ":run_round", "-c", "1", "-o",
                                 data, "--", kSplit, "0.3"},
                                dir_);
  unsetenv("SPLIT_PRINT_ROUNDS");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(rec.err, m, std::regex("rounds: ([0-9]+)"))) << rec.err;
  const long rounds = std::stol(m[1]);
  ASSERT_GT(rounds, 10);

  const RunResult rep = RunTool({kReport, "-i", data, "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_EQ(SampleCount(rep.out), rounds) << rep.out;
  EXPECT_EQ(OverheadOf(rep.out, "[.] run_round"), 100.0) << rep.out;
}

// A tracepoint samples in the kernel, where it fires: the report names the
// kernel function from the symbols stored in the file.
TEST_F(EventsTest, TracepointSamplesAreKernelFunctions) {
  if (const std::string why = TracepointUnavailable("sched", "sched_switch"); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string data = dir_ / "tp.data";
  const RunResult rec = RunTool({kRecord, "-e", "sched:sched_switch", "-c", "1", "-g", "-o", data,
                                 "--", "/bin/sh", "-c", "sleep 0.01; sleep 0.01; sleep 0.01"},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--no-children", "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_GE(SampleCount(rep.out), 3) << rep.out;
  EXPECT_NE(rep.out.find("of event 'sched:sched_switch'"), std::string::npos) << rep.out;
  // Every sample is taken inside the scheduler.
  const auto schedule = OverheadOfRow(rep.out, {"[k] __schedule"});
  ASSERT_TRUE(schedule) << rep.out;
  EXPECT_EQ(*schedule, 100.0) << rep.out;
}

// A cgroup v2 directory of its own, removed (once empty) on destruction; the
// kernel counts cgroup-switches only between tasks of different cgroups.
class ScratchCgroup {
 public:
  ScratchCgroup() {
    std::ifstream mounts("/proc/mounts");
    std::string device, mount_point, type, rest;
    while (mounts >> device >> mount_point >> type && std::getline(mounts, rest)) {
      if (type != "cgroup2") continue;
      std::string pattern = mount_point + "/sample-e2e-XXXXXX";
      // mkdtemp makes the directory, which in cgroupfs makes the cgroup.
      if (mkdtemp(pattern.data()) != nullptr) {
        path_ = pattern;
        return;
      }
    }
  }
  ~ScratchCgroup() {
    if (!path_.empty()) rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_F(EventsTest, CgroupSwitchesRecords) {
  if (const std::string why = CgroupSwitchesUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string workload = "sleep 0.01; sleep 0.01; sleep 0.01";
  const RunResult rec = RunTool(
      {kRecord, "-e", "cgroup-switches", "-o", dir_ / "cg.data", "--", "/bin/sh", "-c", workload},
      dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", dir_ / "cg.data"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.out.find("of event 'cgroup-switches'"), std::string::npos) << rep.out;

  // Switches happen between the recorded tasks and others (idle, at least)
  // only when they are in a cgroup of their own.
  const ScratchCgroup cgroup;
  if (cgroup.path().empty()) {
    GTEST_SKIP() << "recorded, but no cgroup v2 directory could be made to give the workload "
                    "a cgroup of its own, so there are no cgroup switches to count";
  }
  // Only the workload joins it: were the recorder there too, a sleep's
  // switch-out to the recorder would change no cgroup.
  const RunResult in_cgroup =
      RunTool({kRecord, "-e", "cgroup-switches", "-o", dir_ / "cg2.data", "--", "/bin/sh", "-c",
               "echo $$ > \"$0/cgroup.procs\" && " + workload, cgroup.path()},
              dir_);
  ASSERT_EQ(in_cgroup.exit_code, 0) << in_cgroup.err;
  const RunResult counted = RunTool({kReport, "-i", dir_ / "cg2.data"}, dir_);
  EXPECT_GE(SampleCount(counted.out), 3) << counted.out;  // one sleep at least each
}

// An unprivileged user asking for a tracepoint while tracefs is mounted
// root-only (its default mode, 0700) is told exactly that, not that tracefs
// is not mounted. Runs the recorder as nobody from a copy in a directory
// nobody can reach (the checkout may be in a private one).
TEST_F(EventsTest, RootOnlyTracefsIsNotCalledUnmounted) {
  const std::string tracing = "/sys/kernel/tracing";
  struct stat st {};
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run the recorder as another user";
  if (stat((tracing + "/events").c_str(), &st) != 0) {
    GTEST_SKIP() << "no tracefs mounted at " << tracing;
  }
  stat(tracing.c_str(), &st);
  if ((st.st_mode & 0005) != 0) {
    GTEST_SKIP() << tracing << " is readable by others here (mode " << std::oct
                 << (st.st_mode & 07777) << "): nothing to diagnose";
  }
  if (access(kSetpriv, X_OK) != 0) GTEST_SKIP() << "no " << kSetpriv << " to become nobody";
  NobodyDir home;
  ASSERT_FALSE(home.path().empty());
  ASSERT_TRUE(home.Copy(kRecord, "sample-record"));
  const RunResult rec = RunTool(
      AsNobody({"/bin/sh", "-c",
                "cd \"$0\" && exec ./sample-record -e sched:sched_switch -o x.data -- /bin/true",
                home.path()}),
      dir_);
  EXPECT_NE(rec.exit_code, 0) << rec.err;
  EXPECT_NE(rec.err.find("tracefs is mounted at " + tracing), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("but this user (uid 65534) may not read it: permission denied"),
            std::string::npos)
      << rec.err;
  EXPECT_EQ(rec.err.find("not mounted"), std::string::npos) << rec.err;
  // A tracepoint fires in the kernel: "recording user space only" would be
  // wrong, and nothing was recorded anyway.
  EXPECT_EQ(rec.err.find("user space only"), std::string::npos) << rec.err;
}

TEST_F(EventsTest, EachEventGetsItsOwnSection) {
  const std::string data = dir_ / "two.data";
  const RunResult rec = RunTool(
      {kRecord, "-e", "cpu-clock", "-e", "page-faults", "-o", data, "--", kSplit, "0.3"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const size_t clock = rep.out.find("of event 'cpu-clock'");
  const size_t faults = rep.out.find("of event 'page-faults'");
  ASSERT_NE(clock, std::string::npos) << rep.out;
  ASSERT_NE(faults, std::string::npos) << rep.out;
  // The timer's section is the split workload's, undisturbed by the faults.
  const auto sixty = OverheadOf(rep.out.substr(clock, faults - clock), "[.] compute_sixty");
  ASSERT_TRUE(sixty) << rep.out;
  EXPECT_NEAR(*sixty, 60.0, 6.0);
}

TEST_F(EventsTest, PerEventPeriodTerm) {
  const std::string data = dir_ / "term.data";
  // task-clock counts ns of CPU: one sample per 2 ms of 0.4 s is ~200.
  const RunResult rec =
      RunTool({kRecord, "-e", "task-clock/period=2000000/", "-o", data, "--", kSplit, "0.4"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data}, dir_);
  EXPECT_NEAR(SampleCount(rep.out), 200, 30) << rep.out;
}

TEST_F(EventsTest, GroupWithSampleReadRecords) {
  const std::string data = dir_ / "group.data";
  const RunResult rec =
      RunTool({kRecord, "-e", "{cpu-clock,page-faults}:S", "-o", data, "--", kSplit, "0.3"}, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult rep = RunTool({kReport, "-i", data, "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  // Only the leader samples; its section carries the member's counts.
  EXPECT_NE(rep.out.find("of events 'anon group { cpu-clock, page-faults }'"), std::string::npos)
      << rep.out;
  EXPECT_EQ(rep.out.find("of event 'page-faults'"), std::string::npos) << rep.out;
  EXPECT_TRUE(OverheadOf(rep.out, "[.] compute_sixty").has_value()) << rep.out;
  // split touches few pages while computing, but the loader faults some in.
  const size_t count = rep.out.find("# Event count (approx.): ");
  ASSERT_NE(count, std::string::npos);
  const std::string line = rep.out.substr(count, rep.out.find('\n', count) - count);
  EXPECT_NE(line.find("(page-faults)"), std::string::npos) << line;
  EXPECT_EQ(line.find(", 0 (page-faults)"), std::string::npos) << line;
}

TEST_F(EventsTest, MissingHardwareFallsBackOnlyForTheDefault) {
  // Whether there is a PMU is the kernel's word, not the recorder's: a
  // recorder that stopped saying it fell back must fail here, not skip.
  if (HardwareCyclesOpen()) {
    GTEST_SKIP() << "this machine has a hardware PMU; the fallback is not exercised";
  }
  const RunResult dflt = RunTool({kRecord, "-o", dir_ / "d.data", "--", kSplit, "0.1"}, dir_);
  ASSERT_EQ(dflt.exit_code, 0) << dflt.err;
  EXPECT_NE(dflt.err.find("using cpu-clock instead"), std::string::npos) << dflt.err;
  const RunResult explicit_cycles =
      RunTool({kRecord, "-e", "cycles", "-o", dir_ / "c.data", "--", kSplit, "0.1"}, dir_);
  // Asked for explicitly, a missing PMU is an error with advice, not a swap.
  EXPECT_NE(explicit_cycles.exit_code, 0);
  EXPECT_NE(explicit_cycles.err.find("PMU"), std::string::npos) << explicit_cycles.err;
  // -q keeps the fallback note to itself (and still falls back).
  const RunResult quiet =
      RunTool({kRecord, "-q", "-o", dir_ / "q.data", "--", kSplit, "0.1"}, dir_);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  const RunResult rep = RunTool({kReport, "-i", dir_ / "q.data"}, dir_);
  EXPECT_NE(rep.out.find("of event 'cpu-clock'"), std::string::npos) << rep.out;
}

}  // namespace
}  // namespace sample::e2e
