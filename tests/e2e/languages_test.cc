// End to end: programs in each language whose CPU time splits by
// construction, recorded with -g and with --call-graph dwarf. The rows are
// the functions the program spends its time in, as perf's rows (code
// inlined into a function counts as the function's), within 5 points of the
// construction; where perf is installed, perf's own recording of the same
// program reported by perf report and by sample-report gives the same rows.
// Go is in unwind_test.cc (callers of frameless leaves), JavaScript in
// jitdump_test.cc.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSharedInline = WORKLOAD_SHARED_INLINE_PATH;
const std::string kMixer = WORKLOAD_MIXER_PATH;
#ifdef WORKLOAD_RUST_JOBS_PATH
const std::string kRustJobs = WORKLOAD_RUST_JOBS_PATH;
#else
const std::string kRustJobs;
#endif

constexpr double kMargin = 5.0;  // percentage points

struct Share {
  std::string row;  // the symbol as the flat profile prints it
  double percent = 0;
};

class LanguagesTest : public ::testing::Test {
 protected:
  // The flat profile's rows (--no-children --sort sym) of `data` by `tool`.
  std::string Rows(const std::string& tool, const std::string& data) {
    std::vector<std::string> argv = {tool};
    if (tool == kPerf) argv.insert(argv.end(), {"report", "--stdio"});
    argv.insert(argv.end(), {"-i", data, "--no-children", "--sort", "sym", "-g", "none"});
    const RunResult r = RunTool(argv, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  // Records `command` with our recorder and `options` (a call-chain mode),
  // and expects `split` in its rows.
  void ExpectSplit(const std::vector<std::string>& options, const std::vector<std::string>& command,
                   const std::vector<Share>& split) {
    const std::string data = dir_ / "ours.data";
    std::vector<std::string> argv = {kRecord, "-e", "cpu-clock", "-o", data};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    const RunResult rec = RunTool(argv, dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    const std::string rows = Rows(kReport, data);
    for (const Share& share : split) {
      const auto percent = OverheadOf(rows, share.row);
      ASSERT_TRUE(percent) << share.row << " missing with " << options[0] << " in\n" << rows;
      EXPECT_NEAR(*percent, share.percent, kMargin) << share.row << " with " << options[0] << "\n"
                                                    << rows;
    }
  }

  // Records `command` with perf -g and reports the file with both tools:
  // the rows of `split` have the same percentages (each within the
  // construction's margin).
  void ExpectSameAsPerf(const std::vector<std::string>& command, const std::vector<Share>& split) {
    if (!PerfUnusable().empty()) {
      std::cout << "[ perf comparison skipped: " << PerfUnusable() << " ]\n";
      return;
    }
    const std::string data = dir_ / "perf.data";
    std::vector<std::string> argv = {kPerf,       "record", "-q", "--no-buildid-cache", "-e",
                                     "cpu-clock", "-g",     "-o", data,                 "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    const RunResult rec = RunTool(argv, dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    const std::string perf_rows = Rows(kPerf, data);
    const std::string our_rows = Rows(kReport, data);
    for (const Share& share : split) {
      const auto theirs = OverheadOf(perf_rows, share.row);
      const auto ours = OverheadOf(our_rows, share.row);
      ASSERT_TRUE(theirs) << share.row << " missing in perf report's\n" << perf_rows;
      ASSERT_TRUE(ours) << share.row << " missing in ours\n" << our_rows;
      EXPECT_NEAR(*ours, *theirs, 0.011) << share.row;
      EXPECT_NEAR(*theirs, share.percent, kMargin) << share.row;
    }
  }

  void ExpectEverywhere(const std::vector<std::string>& command, const std::vector<Share>& split) {
    ExpectSplit({"-g"}, command, split);
    ExpectSplit({"--call-graph", "dwarf"}, command, split);
    ExpectSameAsPerf(command, split);
  }

  ScratchDir dir_;
};

// C: three functions sharing one inlined helper, 50/30/20.
TEST_F(LanguagesTest, CFunctionsSharingAnInlinedHelper) {
  ExpectEverywhere({kSharedInline, "0.6"}, {{"func_a", 50}, {"func_b", 30}, {"func_c", 20}});
}

// C++: two instances of a class template, 60/40, spinning in an inlined
// lambda; rows without parameter lists, as perf prints them.
TEST_F(LanguagesTest, CxxTemplateInstances) {
  ExpectEverywhere({kMixer, "0.6"}, {{"acc::Mixer<unsigned long>::churn", 60},
                                     {"acc::Mixer<unsigned int>::churn", 40}});
}

// Rust: a method, a trait implementation and a closure, 50/30/20, each
// spinning in inlined helpers (wrapping arithmetic, the range iterator).
TEST_F(LanguagesTest, RustMethodTraitImplAndClosure) {
  if (kRustJobs.empty()) GTEST_SKIP() << "rustc was not found when the tests were built";
  ExpectEverywhere({kRustJobs, "0.6"}, {{"jobs::Worker::spin", 50},
                                        {"<jobs::Thirty as jobs::Job>::work", 30},
                                        {"jobs::main::{{closure}}", 20}});
}

}  // namespace
}  // namespace sample::e2e
