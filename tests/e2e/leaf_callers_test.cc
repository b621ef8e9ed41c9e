// End to end: -g finds the callers a frame-pointer chain skips (issue 29).
// Each workload splits its time between callers of a frameless function by
// construction: C leaves at -O2 (leaf.c split: 70/30), Go leaves
// (goleaf.go: 50/30/20), and libc's nanosleep wrappers under --off-cpu
// (offcpu.c: wait_sleep 70% of the wall time). Recorded with -g and with
// --call-graph dwarf, each must give the split within 5 points in the
// children view; and where perf report gives the same answer on the same
// program, ours must agree with it within 5 points, in the same test.
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kLeaf = WORKLOAD_LEAF_PATH;
const std::string kOffCpu = WORKLOAD_OFFCPU_PATH;
constexpr const char* kPerf = "/usr/bin/perf";
constexpr const char* kChrt = "/usr/bin/chrt";
constexpr double kMargin = 5.0;

using Shares = std::map<std::string, double>;

class LeafCallersTest : public ::testing::Test {
 protected:
  // Records `workload` with `call_graph` (sample-record options) and returns
  // the children-view share of each of `functions` (absent: 0).
  Shares Record(const std::vector<std::string>& call_graph,
                const std::vector<std::string>& workload, const std::vector<std::string>& functions,
                const std::string& tag) {
    const std::string data = dir_ / (tag + ".data");
    std::vector<std::string> argv = {kRecord, "-F", "1000", "-e", "cpu-clock", "-o", data};
    argv.insert(argv.end(), call_graph.begin(), call_graph.end());
    argv.push_back("--");
    argv.insert(argv.end(), workload.begin(), workload.end());
    const RunResult rec = RunTool(argv, dir_);
    EXPECT_EQ(rec.exit_code, 0) << rec.err;
    const RunResult rep = RunTool({kReport, "-i", data, "--children", "--sort", "sym"}, dir_);
    EXPECT_EQ(rep.exit_code, 0) << rep.err;
    const RunResult stats = RunTool({kReport, "-i", data, "--stats"}, dir_);
    EXPECT_EQ(stats.exit_code, 0) << stats.err;
    report_[tag] = rep.out;
    stats_[tag] = stats.out;
    return SharesIn(rep.out, functions);
  }

  // perf record OPTIONS of `workload`, then perf report's children view;
  // nullopt (the reason in perf_missing_) when perf is not installed.
  std::optional<Shares> RecordWithPerf(const std::vector<std::string>& options,
                                       const std::vector<std::string>& workload,
                                       const std::vector<std::string>& functions,
                                       const std::string& tag) {
    if (access(kPerf, X_OK) != 0) {
      perf_missing_ = "perf is not installed (apt-get install linux-perf)";
      return std::nullopt;
    }
    const std::string data = dir_ / (tag + ".perf.data");
    std::vector<std::string> argv = {
        kPerf, "record", "-q", "--no-buildid-cache", "-F", "1000", "-e", "cpu-clock", "-o", data};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.insert(argv.end(), workload.begin(), workload.end());
    const RunResult rec = RunTool(argv, dir_);
    EXPECT_EQ(rec.exit_code, 0) << rec.err;
    const RunResult rep = RunTool(
        {kPerf, "report", "--stdio", "-i", data, "--children", "--sort", "sym", "-g", "none"},
        dir_);
    EXPECT_EQ(rep.exit_code, 0) << rep.err;
    report_[tag] = rep.out;
    return SharesIn(rep.out, functions);
  }

  static Shares SharesIn(const std::string& report, const std::vector<std::string>& functions) {
    Shares shares;
    for (const std::string& f : functions) shares[f] = OverheadOf(report, f).value_or(0);
    return shares;
  }

  // Every share within kMargin of what was expected, the report shown if not.
  void ExpectShares(const Shares& got, const Shares& expected, const std::string& tag) {
    for (const auto& [function, share] : expected) {
      EXPECT_NEAR(got.at(function), share, kMargin) << function << " in " << tag << "\n"
                                                    << report_[tag];
    }
  }

  ScratchDir dir_;
  std::map<std::string, std::string> report_;
  std::map<std::string, std::string> stats_;  // --stats, of our recordings
  std::string perf_missing_;
};

// leaf_fn has no frame set-up (gcc at -O2, frame pointers on): the kernel's
// chain skips parent_seventy and parent_thirty, which -g puts back.
TEST_F(LeafCallersTest, CLeavesCallersSplitSeventyThirty) {
  const std::vector<std::string> workload = {kLeaf, "1", "split"};
  const std::vector<std::string> callers = {"parent_seventy", "parent_thirty"};
  const Shares expected = {{"parent_seventy", 70}, {"parent_thirty", 30}};
  const Shares g = Record({"-g"}, workload, callers, "g");
  ExpectShares(g, expected, "g");
  EXPECT_NE(stats_["g"].find("callers inserted"), std::string::npos) << stats_["g"];
  const Shares dwarf = Record({"--call-graph", "dwarf"}, workload, callers, "dwarf");
  ExpectShares(dwarf, expected, "dwarf");
  // --call-graph fp is perf's -g: the kernel's chain alone, which skips them.
  const Shares fp = Record({"--call-graph", "fp"}, workload, callers, "fp");
  EXPECT_LT(fp.at("parent_seventy") + fp.at("parent_thirty"), 50.0) << "gcc gave leaf_fn a frame?\n"
                                                                    << report_["fp"];
  // perf's dwarf unwinding reads the same CFI: the same split.
  const auto perf = RecordWithPerf({"--call-graph", "dwarf"}, workload, callers, "perf-dwarf");
  if (!perf) GTEST_SKIP() << perf_missing_;
  ExpectShares(g, *perf, "perf-dwarf");
  ExpectShares(dwarf, *perf, "perf-dwarf");
}

#ifdef WORKLOAD_GOLEAF_PATH
const std::string kGoLeaf = WORKLOAD_GOLEAF_PATH;

// main.spin has no frame (Go gives a leaf needing no stack none): the
// kernel's chain reads spin, main.main and skips alpha, beta and gamma.
TEST_F(LeafCallersTest, GoLeavesCallersSplitFiftyThirtyTwenty) {
  const std::vector<std::string> workload = {kGoLeaf, "1.5"};
  const std::vector<std::string> functions = {"main.alpha", "main.beta", "main.gamma", "main.spin",
                                              "main.main"};
  const Shares expected = {{"main.alpha", 50}, {"main.beta", 30}, {"main.gamma", 20}};
  const Shares g = Record({"-g"}, workload, functions, "g");
  ExpectShares(g, expected, "g");
  // Go's CFI is .debug_frame alone, which the dwarf walk reads too.
  const Shares dwarf = Record({"--call-graph", "dwarf"}, workload, functions, "dwarf");
  ExpectShares(dwarf, expected, "dwarf");
  const Shares fp = Record({"--call-graph", "fp"}, workload, functions, "fp");
  EXPECT_LT(fp.at("main.alpha") + fp.at("main.beta") + fp.at("main.gamma"), 50.0)
      << "Go gave main.spin a frame?\n"
      << report_["fp"];
  // perf 6.1 finds neither the callers (-g skips them as ours does with
  // --call-graph fp; its dwarf walk does not read Go's .debug_frame and
  // stops at spin) but agrees on what both see: spin's own time, and with
  // -g, main.main's.
  const auto perf = RecordWithPerf({"-g"}, workload, functions, "perf-g");
  if (!perf) GTEST_SKIP() << perf_missing_;
  ExpectShares(g, {{"main.spin", perf->at("main.spin")}, {"main.main", perf->at("main.main")}},
               "g");
  ExpectShares(fp, *perf, "fp");
}
#else
TEST_F(LeafCallersTest, GoLeavesCallersSplitFiftyThirtyTwenty) {
  GTEST_SKIP() << "no Go toolchain was found when the build was configured (golang-go)";
}
#endif

// The part of a text report from the section whose title line contains
// `title` to the next section (or the end); empty when there is none.
std::string SectionOf(const std::string& report, const std::string& title) {
  const size_t at = report.find(title);
  if (at == std::string::npos) return "";
  const size_t start = report.rfind("# Samples:", at);
  const size_t next = report.find("# Samples:", at);
  return report.substr(start, next == std::string::npos ? std::string::npos : next - start);
}

// A thread blocked in nanosleep is switched out in the kernel under libc's
// nanosleep and clock_nanosleep, neither of which sets up a frame: the
// kernel's chain from the syscall's registers reads clock_nanosleep, main.
// The switch-out sample's registers and stack copy let the report step out
// of both to wait_sleep, as a dwarf recording does.
TEST_F(LeafCallersTest, OffCpuDashGNamesTheFunctionThatBlocked) {
  const std::string skipped = TracepointUnavailable("sched", "sched_switch", /*raw_data=*/true);
  if (!skipped.empty()) GTEST_SKIP() << skipped;
  const std::string data = dir_ / "offcpu.data";
  // As in off_cpu_test.cc: SCHED_FIFO as root keeps a loaded machine from
  // preempting busy() past its 3 ms.
  std::vector<std::string> argv = {kRecord,     "-F", "1000", "-e", "cpu-clock",
                                   "--off-cpu", "-g", "-o",   data, "--"};
  if (geteuid() == 0 && access(kChrt, X_OK) == 0) argv.insert(argv.end(), {kChrt, "-f", "1"});
  argv.insert(argv.end(), {kOffCpu, "sleep", "100"});
  const RunResult rec = RunTool(argv, dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;

  const RunResult rep = RunTool({kReport, "-i", data, "--children", "--sort", "sym"}, dir_);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const std::string off_cpu = SectionOf(rep.out, "of event 'off-cpu'");
  ASSERT_FALSE(off_cpu.empty()) << rep.out;
  EXPECT_GE(OverheadOf(off_cpu, "wait_sleep").value_or(0), 90.0) << off_cpu;
  EXPECT_LE(OverheadOf(off_cpu, "busy").value_or(0), 10.0) << off_cpu;

  const RunResult wall =
      RunTool({kReport, "-i", data, "--wall", "--children", "--sort", "sym"}, dir_);
  ASSERT_EQ(wall.exit_code, 0) << wall.err;
  const std::string thread = SectionOf(wall.out, "of event 'wall, thread ");
  ASSERT_FALSE(thread.empty()) << wall.out;
  EXPECT_NEAR(OverheadOf(thread, "wait_sleep").value_or(0), 70.0, kMargin) << thread;
  EXPECT_NEAR(OverheadOf(thread, "busy").value_or(0), 30.0, kMargin) << thread;

  // Each blocked switch-out's chain, leaf first: the kernel, libc's
  // clock_nanosleep, then wait_sleep.
  const RunResult script = RunTool({kReport, "-i", data, "--script"}, dir_);
  ASSERT_EQ(script.exit_code, 0) << script.err;
  size_t switches = 0, through_wait = 0;
  bool in_switch = false, seen_sleep = false;
  for (const std::string& line : Lines(script.out)) {
    if (line.empty()) continue;
    if (line[0] != '\t') {
      in_switch = line.ends_with(" off-cpu:");  // blocked, not preempted
      switches += in_switch;
      seen_sleep = false;
      continue;
    }
    if (!in_switch) continue;
    seen_sleep = seen_sleep || line.find(" clock_nanosleep") != std::string::npos;
    through_wait += seen_sleep && line.find(" wait_sleep+") != std::string::npos;
  }
  ASSERT_GE(switches, 100u) << script.out.substr(0, 4000);
  EXPECT_GE(through_wait * 100, switches * 90) << through_wait << " of " << switches;
}

}  // namespace
}  // namespace sample::e2e
