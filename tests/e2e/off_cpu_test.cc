// Off-CPU and wall-clock profiles of the offcpu workload, recorded with
// --off-cpu: where a thread waits, for how long, and its time on and off
// the CPU together. The workload's splits are known by construction
// (tests/workloads/offcpu.c).
#include <unistd.h>

#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kOffCpu = WORKLOAD_OFFCPU_PATH;
constexpr const char* kChrt = "/usr/bin/chrt";

// The part of a text report from the section whose title line contains
// `title` to the next section (or the end); empty when there is none.
std::string SectionOf(const std::string& report, const std::string& title) {
  const size_t at = report.find(title);
  if (at == std::string::npos) return "";
  const size_t start = report.rfind("# Samples:", at);
  const size_t next = report.find("# Samples:", at);
  return report.substr(start, next == std::string::npos ? std::string::npos : next - start);
}

class OffCpuTest : public ::testing::Test {
 protected:
  // Records the workload with --off-cpu; false (the reason in skipped_,
  // for a skip) where this user may not open the sched:sched_switch
  // tracepoint, as the kernel and tracefs say when asked directly: a
  // recorder that fails for another reason fails the test.
  // A shared, loaded machine preempts the workload's busy() past its 3 ms
  // (measured: 40 preemptions of ~3.5 ms in 100 rounds at a load of 6 on 2
  // cores, busy() at 35% of the wall time): as root it runs SCHED_FIFO, which
  // no ordinary task preempts. A big buffer and -F 1000 keep the dwarf
  // stack copies from being lost while the recorder waits for a CPU.
  bool Record(const std::vector<std::string>& workload_args) {
    skipped_ = TracepointUnavailable("sched", "sched_switch", /*raw_data=*/true);
    if (!skipped_.empty()) return false;
    std::vector<std::string> argv = {kRecord, "-F",        "1000",      "-m",           "1024",
                                     "-e",    "cpu-clock", "--off-cpu", "--call-graph", "dwarf",
                                     "-o",    data_,       "--"};
    if (geteuid() == 0 && access(kChrt, X_OK) == 0) argv.insert(argv.end(), {kChrt, "-f", "1"});
    argv.push_back(kOffCpu);
    argv.insert(argv.end(), workload_args.begin(), workload_args.end());
    const RunResult rec = RunTool(argv, dir_);
    EXPECT_EQ(rec.exit_code, 0) << rec.err;
    return true;
  }
  std::string Report(std::vector<std::string> args) {
    args.insert(args.begin(), {kReport, "-i", data_});
    const RunResult rep = RunTool(args, dir_);
    EXPECT_EQ(rep.exit_code, 0) << rep.err;
    return rep.out;
  }

  ScratchDir dir_;
  const std::string data_ = dir_ / "offcpu.data";
  std::string skipped_;
};

TEST_F(OffCpuTest, BlockedTimeIsTheSleepingChains) {
  if (!Record({"sleep", "100"})) GTEST_SKIP() << skipped_;
  const std::string report = Report({"--children", "--sort", "sym"});
  const std::string off_cpu = SectionOf(report, "of event 'off-cpu'");
  ASSERT_FALSE(off_cpu.empty()) << report;
  EXPECT_NE(off_cpu.find("blocked off the CPU"), std::string::npos) << off_cpu;
  // 100 sleeps of at least 7 ms each: at least 0.7 s blocked, in ns.
  std::smatch time;
  ASSERT_TRUE(std::regex_search(off_cpu, time, std::regex(R"(# Time: [0-9.]+ m?s \((\d+) ns\))")))
      << off_cpu;
  EXPECT_GE(std::stoull(time[1]), 700'000'000ull) << off_cpu;
  const auto waiting = OverheadOf(off_cpu, "wait_sleep");
  ASSERT_TRUE(waiting) << off_cpu;
  EXPECT_GE(*waiting, 90.0) << off_cpu;
  const auto busy = OverheadOf(off_cpu, "busy");
  EXPECT_LE(busy.value_or(0), 10.0) << off_cpu;
  EXPECT_EQ(off_cpu.find("# Lost samples: 0"), off_cpu.find("# Lost samples:")) << off_cpu;
  // The on-CPU profile is still there, and blocked time is not in it.
  const std::string on_cpu = SectionOf(report, "of event 'cpu-clock'");
  EXPECT_GE(OverheadOf(on_cpu, "busy").value_or(0), 90.0) << on_cpu;
}

TEST_F(OffCpuTest, WallSplitsEachThreadsTimeThirtySeventy) {
  if (!Record({"sleep", "100"})) GTEST_SKIP() << skipped_;
  const std::string report = Report({"--wall", "--children", "--sort", "sym"});
  const std::string wall = SectionOf(report, "of event 'wall, thread ");
  ASSERT_FALSE(wall.empty()) << report;
  EXPECT_NE(wall.find("(offcpu)"), std::string::npos) << wall;
  const auto busy = OverheadOf(wall, "busy");
  const auto waiting = OverheadOf(wall, "wait_sleep");
  ASSERT_TRUE(busy && waiting) << wall;
  EXPECT_NEAR(*busy, 30.0, 5.0) << wall;
  EXPECT_NEAR(*waiting, 70.0, 5.0) << wall;
  // Without an off-CPU recording there is nothing to add up.
  const std::string plain = dir_ / "plain.data";
  ASSERT_EQ(RunTool({kRecord, "-e", "cpu-clock", "-o", plain, "--", kOffCpu, "sleep", "2"}, dir_)
                .exit_code,
            0);
  const RunResult refused = RunTool({kReport, "-i", plain, "--wall"}, dir_);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--wall: " + plain +
                             " has no off-CPU data; record with "
                             "sample-record --off-cpu"),
            std::string::npos)
      << refused.err;
}

TEST_F(OffCpuTest, LockContentionShowsTheWaitingChain) {
  if (!Record({"lock", "50"})) GTEST_SKIP() << skipped_;
  const std::string report = Report({"--children", "--sort", "sym", "--comm", "contender"});
  const std::string off_cpu = SectionOf(report, "of event 'off-cpu'");
  ASSERT_FALSE(off_cpu.empty()) << report;
  // libc's symbol is versioned: pthread_mutex_lock@@GLIBC_2.2.5.
  const auto lock = OverheadOfRow(off_cpu, {"] pthread_mutex_lock"});
  const auto contend = OverheadOf(off_cpu, "contend");
  ASSERT_TRUE(lock && contend) << off_cpu;
  EXPECT_GE(*lock, 80.0) << off_cpu;
  EXPECT_GE(*contend, 80.0) << off_cpu;
  // The chain, leaf first: the futex wait under pthread_mutex_lock under contend.
  const std::string graph =
      Report({"--no-children", "--sort", "sym", "--comm", "contender", "-g", "callee"});
  const std::string off_cpu_graph = SectionOf(graph, "of event 'off-cpu'");
  const size_t lock_at = off_cpu_graph.find("pthread_mutex_lock");
  ASSERT_NE(lock_at, std::string::npos) << off_cpu_graph;
  EXPECT_NE(off_cpu_graph.find("contend", lock_at), std::string::npos) << off_cpu_graph;
}

TEST_F(OffCpuTest, WithoutCallChainsItIsRefused) {
  const RunResult rec =
      RunTool({kRecord, "--off-cpu", "-o", data_, "--", kOffCpu, "sleep", "1"}, dir_);
  EXPECT_EQ(rec.exit_code, 2);
  EXPECT_NE(rec.err.find("--off-cpu needs call chains"), std::string::npos) << rec.err;
}

TEST_F(OffCpuTest, SwitchRecordsAreAnOptionOfScript) {
  for (const char* option : {"--show-switch-events", "--show-all-records"}) {
    const RunResult rep = RunTool({kReport, "-i", data_, option}, dir_);
    EXPECT_EQ(rep.exit_code, 2) << option;
    EXPECT_NE(rep.err.find(std::string(option) + " is an option of --script"), std::string::npos)
        << rep.err;
  }
}

}  // namespace
}  // namespace sample::e2e
