// The terminal browser (sample-report on a terminal) driven as a person
// would: in a tmux session, keys typed with send-keys, the screen read with
// capture-pane.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/tmux_session.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;
const std::string kThreads = WORKLOAD_THREADS_PATH;

class TuiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunTool({kTmux, "-V"}, dir_).exit_code != 0) {
      GTEST_SKIP() << "tmux is not installed (scripts/setup.sh installs it with the tests)";
    }
  }

  // The shell command a session runs: the browser, then its exit status
  // and the terminal's modes, each written to a file.
  std::string BrowserCommand(const std::string& data, const std::string& args) const {
    return SessionCommand(dir_, ShellQuote(kReport) + " -i " + ShellQuote(data) + " " + args);
  }

  // `workload 0.5` recorded with -g; the file's path, or "" (said) on failure.
  std::string Record(const std::string& workload) {
    const std::string data = dir_ / "rec.data";
    const RunResult rec =
        RunTool({kRecord, "-q", "-g", "-F", "1000", "-o", data, "--", workload, "0.5"}, dir_);
    EXPECT_EQ(rec.exit_code, 0) << rec.err;
    return rec.exit_code == 0 ? data : "";
  }

  ScratchDir dir_;
};

TEST_F(TuiTest, FirstScreenUnfoldSearchAndQuit) {
  const std::string data = Record(kSplit);
  ASSERT_FALSE(data.empty());
  Tmux tmux(dir_, BrowserCommand(data, "--no-children"));
  ASSERT_TRUE(tmux.started());

  // The first screen: the hot function with its share (60% by construction).
  std::string screen =
      tmux.WaitFor([](const std::string& s) { return Contains(s, "compute_sixty"); });
  const auto sixty = OverheadOf(screen, "compute_sixty");
  ASSERT_TRUE(sixty.has_value()) << screen;
  EXPECT_NEAR(*sixty, 60.0, 10.0) << screen;
  EXPECT_TRUE(Contains(screen, "Samples: ")) << screen;

  // Enter on the row unfolds its callers (-g's callee order without
  // --children): run_round called it.
  tmux.Type("/");
  tmux.Type("compute_sixty");
  tmux.Keys({"Enter", "Enter"});
  screen = tmux.WaitFor([](const std::string& s) {
    return AnyContains(LinesFrom(s, "[.] compute_sixty", 4), "run_round");
  });
  EXPECT_TRUE(AnyContains(LinesFrom(screen, "[.] compute_sixty", 4), "run_round")) << screen;

  // A search moves to another row; Enter unfolds that one.
  tmux.Type("/");
  tmux.Type("compute_t.n");
  tmux.Keys({"Enter", "Enter"});
  screen = tmux.WaitFor([](const std::string& s) {
    return AnyContains(LinesFrom(s, "[.] compute_ten", 4), "run_round");
  });
  EXPECT_TRUE(AnyContains(LinesFrom(screen, "[.] compute_ten", 4), "run_round")) << screen;

  // ? lists the keys; q closes the page, q again quits at once.
  tmux.Keys({"?"});
  screen =
      tmux.WaitFor([](const std::string& s) { return Contains(s, "zoom into the row's thread"); });
  EXPECT_TRUE(Contains(screen, "zoom into the row's thread")) << screen;
  tmux.Keys({"q"});
  tmux.WaitFor([](const std::string& s) { return Contains(s, "compute_sixty"); });
  ExpectQuitAtOnce(tmux, dir_);
}

TEST_F(TuiTest, ZoomIntoAThreadFiltersTheRowsAndASignalRestoresTheTerminal) {
  const std::string data = Record(kThreads);
  ASSERT_FALSE(data.empty());
  Tmux tmux(dir_, BrowserCommand(data, "--no-children"));
  ASSERT_TRUE(tmux.started());
  std::string screen = tmux.WaitFor([](const std::string& s) { return Contains(s, "work_leaf"); });
  const long all = TitleSamples(screen);
  ASSERT_GT(all, 100) << screen;

  // t on the first row: its thread, one of the two that share the work.
  tmux.Keys({"t"});
  screen = tmux.WaitFor([](const std::string& s) { return Contains(s, "Thread: "); });
  ASSERT_TRUE(Contains(screen, "Thread: ")) << screen;
  const long one = TitleSamples(screen);
  EXPECT_GT(one, all * 3 / 10) << screen;
  EXPECT_LT(one, all * 7 / 10) << screen;

  // Esc zooms back out.
  tmux.Keys({"Escape"});
  screen = tmux.WaitFor([](const std::string& s) { return !Contains(s, "Thread: "); });
  EXPECT_EQ(TitleSamples(screen), all) << screen;

  // A smaller terminal: the screen is drawn again for it, the title (longer
  // than 40 columns) cut with an ellipsis.
  tmux.Run({"resize-window", "-t", "t", "-x", "40", "-y", "12"});
  auto cut = [](const std::string& line) {
    return line.ends_with("...") || line.ends_with("\u2026");
  };
  screen = tmux.WaitFor([&](const std::string& s) {
    const std::vector<std::string> lines = Lines(s);
    return !lines.empty() && Contains(lines[0], "Samples:") && cut(lines[0]);
  });
  const std::vector<std::string> small = Lines(screen);
  ASSERT_FALSE(small.empty()) << screen;
  EXPECT_TRUE(Contains(small[0], "Samples:") && cut(small[0])) << screen;
  EXPECT_LE(small.size(), 12u) << screen;

  // Ctrl-C: the browser ends as interrupted, the terminal restored.
  tmux.Keys({"C-c"});
  EXPECT_EQ(WaitForFile(dir_ / "status", std::chrono::seconds(5)), "130\n");
  const std::string stty = ReadFile(dir_ / "stty.txt");
  EXPECT_TRUE(Contains(stty, " icanon") && Contains(stty, " echo ")) << stty;
}

}  // namespace
}  // namespace sample::e2e
