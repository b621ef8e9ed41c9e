// sample-top driven as a person would: on a terminal (tmux) against a
// running workload, and without one (--stdio).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/tmux_session.h"

namespace sample::e2e {
namespace {

const std::string kTop = SAMPLE_TOP_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;

// The refresh time the title shows ("| HH:MM:SS").
std::string RefreshTime(const std::string& screen) {
  std::smatch m;
  static const std::regex kTime("\\| ([0-9]{2}:[0-9]{2}:[0-9]{2})");
  return std::regex_search(screen, m, kTime) ? std::string(m[1]) : "";
}

class TopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A workload that runs for the whole test: 60/30/10% of its time in
    // compute_sixty, compute_thirty and compute_ten.
    workload_ = Start({kSplit, "30"}, dir_, "split");
    ASSERT_GT(workload_, 0);
  }
  void TearDown() override {
    if (workload_ > 0) {
      kill(workload_, SIGKILL);
      Wait(workload_, dir_, "split");
    }
  }

  std::string TopCommand(const std::string& args) const {
    return SessionCommand(dir_, ShellQuote(kTop) + " -p " + std::to_string(workload_) + " " + args);
  }

  ScratchDir dir_;
  pid_t workload_ = -1;
};

TEST_F(TopTest, ShowsTheHotFunctionRefreshesUnfoldsSavesAndQuits) {
  if (RunTool({kTmux, "-V"}, dir_).exit_code != 0) {
    GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it with the tests)";
  }
  Tmux tmux(dir_, TopCommand("-g --no-children -o saved.data"));
  ASSERT_TRUE(tmux.started());
  // The hot function within 4 seconds, with its share.
  std::string screen =
      tmux.WaitFor([](const std::string& s) { return OverheadOf(s, "compute_sixty").has_value(); },
                   std::chrono::seconds(4));
  const auto sixty = OverheadOf(screen, "compute_sixty");
  ASSERT_TRUE(sixty.has_value()) << screen;
  EXPECT_NEAR(*sixty, 60.0, 15.0) << screen;
  // Refreshed: the title's time moves on (every second by default).
  const std::string first = RefreshTime(screen);
  ASSERT_FALSE(first.empty()) << screen;
  screen = tmux.WaitFor(
      [&](const std::string& s) { return !RefreshTime(s).empty() && RefreshTime(s) != first; },
      std::chrono::seconds(3));
  EXPECT_NE(RefreshTime(screen), first) << screen;

  // Enter unfolds the row's callers, and they stay unfolded over refreshes.
  tmux.Type("/");
  tmux.Type("compute_sixty");
  tmux.Keys({"Enter", "Enter"});
  screen = tmux.WaitFor([](const std::string& s) {
    return AnyContains(LinesFrom(s, "[.] compute_sixty", 4), "run_round");
  });
  EXPECT_TRUE(AnyContains(LinesFrom(screen, "[.] compute_sixty", 4), "run_round")) << screen;
  const std::string unfolded_at = RefreshTime(screen);
  screen = tmux.WaitFor([&](const std::string& s) { return RefreshTime(s) != unfolded_at; },
                        std::chrono::seconds(3));
  EXPECT_TRUE(AnyContains(LinesFrom(screen, "[.] compute_sixty", 4), "run_round")) << screen;

  // s saves what was seen so far as a recording sample-report reads.
  tmux.Keys({"s"});
  screen = tmux.WaitFor([](const std::string& s) { return Contains(s, "saved saved.data."); });
  std::smatch m;
  ASSERT_TRUE(std::regex_search(screen, m, std::regex("saved (saved\\.data\\.[0-9.-]+)")))
      << screen;
  const RunResult report =
      RunTool({kReport, "-i", dir_ / m[1].str(), "--stdio", "--no-children"}, dir_);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  const auto saved_sixty = OverheadOf(report.out, "compute_sixty");
  ASSERT_TRUE(saved_sixty.has_value()) << report.out;
  EXPECT_NEAR(*saved_sixty, 60.0, 15.0) << report.out;

  // q quits at once, the terminal restored.
  ExpectQuitAtOnce(tmux, dir_);
}

// The recorder is controlled in-process (no control FIFO in $TMPDIR, so
// a TMPDIR that does not exist changes nothing).
TEST_F(TopTest, StdioPrintsOneTablePerInterval) {
  const RunResult top = RunTool({"/usr/bin/env", "TMPDIR=/nonexistent-sample-top-tmpdir", kTop,
                                 "--stdio", "-p", std::to_string(workload_), "-d", "0.5",
                                 "--duration", "2.2", "--no-children"},
                                dir_);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  // A table every half second: at least 3 in 2.2 s (the last is partial).
  size_t tables = 0;
  for (size_t at = top.out.find("# sample-top "); at != std::string::npos;
       at = top.out.find("# sample-top ", at + 1)) {
    ++tables;
  }
  EXPECT_GE(tables, 3u) << top.out;
  EXPECT_LE(tables, 6u) << top.out;
  const auto sixty = OverheadOf(top.out, "compute_sixty");
  ASSERT_TRUE(sixty.has_value()) << top.out;
  EXPECT_NEAR(*sixty, 60.0, 15.0) << top.out;
}

// Kernel functions are named as addresses come (KallsymsFeed: the
// recorder's per-boot sorted table, bisected), not by reading and sorting
// the kernel's whole table: a workload that lives in write(2), sampled in
// kernel mode, shows named kernel rows.
TEST(TopKernelTest, NamesKernelFunctionsAsTheyCome) {
  if (const std::string why = KernelSamplesUnavailable(); !why.empty()) GTEST_SKIP() << why;
  ScratchDir dir;
  const pid_t hits = Start({WORKLOAD_HITS_PATH, "1000000000"}, dir, "hits");
  ASSERT_GT(hits, 0);
  const RunResult top =
      RunTool({kTop, "--stdio", "-p", std::to_string(hits), "-e", "cpu-clock:k", "-d", "0.5",
               "--duration", "2.2", "--no-children", "--sort", "sym"},
              dir);
  kill(hits, SIGKILL);
  Wait(hits, dir, "hits");
  ASSERT_EQ(top.exit_code, 0) << top.err;
  // The last whole table (the one after it may be partial).
  std::vector<size_t> starts;
  for (size_t at = top.out.find("# sample-top "); at != std::string::npos;
       at = top.out.find("# sample-top ", at + 1)) {
    starts.push_back(at);
  }
  ASSERT_GE(starts.size(), 2u) << top.out;
  const std::string table =
      top.out.substr(starts[starts.size() - 2], starts.back() - starts[starts.size() - 2]);
  double named = 0, unknown = 0;
  for (const std::string& line : Lines(table)) {
    if (line.empty() || line[0] == '#' || line.find("[k] ") == std::string::npos) continue;
    const auto row = OverheadOfRow(line, {"[k] "});  // a profile row's share, nothing else
    if (!row) continue;
    const double share = *row;
    (line.find("[unknown]") != std::string::npos ? unknown : named) += share;
  }
  EXPECT_GT(named, 90.0) << table;
  EXPECT_LT(unknown, 10.0) << table;
  EXPECT_TRUE(table.find("write") != std::string::npos) << table;
}

TEST_F(TopTest, RefusesOutOfRangeOptionsByName) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-d", "0"},
                                               {"-d", "soon"},
                                               {"-F", "0"},
                                               {"--percent-limit", "101"}}) {
    std::vector<std::string> argv = {kTop, "--stdio"};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult top = RunTool(argv, dir_);
    EXPECT_EQ(top.exit_code, 2) << args[0] << " " << args[1] << ": " << top.err;
    EXPECT_NE(top.err.find(args[0]), std::string::npos) << top.err;
  }
}

}  // namespace
}  // namespace sample::e2e
