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

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;
const std::string kThreads = WORKLOAD_THREADS_PATH;
const std::string kTmux = "/usr/bin/tmux";

using Clock = std::chrono::steady_clock;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A tmux server of its own (a socket name no other test uses), one
// session running `command` in a 100x30 window.
class Tmux {
 public:
  Tmux(const ScratchDir& dir, const std::string& command)
      : dir_(dir),
        socket_("sample-tui-" + std::to_string(getpid()) + "-" + std::to_string(++count_)) {
    started_ =
        Run({"new-session", "-d", "-s", "t", "-x", "100", "-y", "30", command}).exit_code == 0;
  }
  ~Tmux() { Run({"kill-server"}); }
  bool started() const { return started_; }

  RunResult Run(std::vector<std::string> args) const {
    args.insert(args.begin(), {kTmux, "-L", socket_, "-f", "/dev/null"});
    return RunTool(args, dir_);
  }
  std::string Screen() const { return Run({"capture-pane", "-p", "-t", "t"}).out; }
  void Keys(const std::vector<std::string>& keys) const {
    std::vector<std::string> args = {"send-keys", "-t", "t"};
    args.insert(args.end(), keys.begin(), keys.end());
    Run(args);
  }
  void Type(const std::string& text) const { Run({"send-keys", "-t", "t", "-l", text}); }

  // Polls the screen until `done` holds; the last screen either way.
  std::string WaitFor(const std::function<bool(const std::string&)>& done,
                      std::chrono::milliseconds limit = std::chrono::seconds(15)) const {
    const auto end = Clock::now() + limit;
    std::string screen = Screen();
    while (!done(screen) && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      screen = Screen();
    }
    return screen;
  }

 private:
  const ScratchDir& dir_;
  std::string socket_;
  bool started_ = false;
  static inline int count_ = 0;
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The line of `screen` holding `part`, and the `after` lines under it.
std::vector<std::string> LinesFrom(const std::string& screen, const std::string& part,
                                   size_t after) {
  const std::vector<std::string> lines = Lines(screen);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!Contains(lines[i], part)) continue;
    return std::vector<std::string>(lines.begin() + i,
                                    lines.begin() + std::min(lines.size(), i + 1 + after));
  }
  return {};
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines) {
    if (Contains(line, part)) return true;
  }
  return false;
}

long TitleSamples(const std::string& screen) {
  std::smatch m;
  static const std::regex kSamples("Samples: ([0-9]+) of event");
  return std::regex_search(screen, m, kSamples) ? std::stol(m[1]) : -1;
}

// Waits for `path` (the exit status the session's shell writes).
std::string WaitForFile(const std::string& path, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    const std::string text = ReadFile(path);
    if (!text.empty() && text.back() == '\n') return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ReadFile(path);
}

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
    // The modes first: the test reads them once the status is there.
    return "cd " + ShellQuote(dir_.path()) + " && " + ShellQuote(kReport) + " -i " +
           ShellQuote(data) + " " + args + "; s=$?; stty -a > stty.txt; " +
           "echo $s > status.tmp && mv status.tmp status; sleep 30";
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
  const auto quit = Clock::now();
  tmux.Keys({"q"});
  const std::string status = WaitForFile(dir_ / "status", std::chrono::seconds(1));
  EXPECT_LT(Clock::now() - quit, std::chrono::seconds(1));
  EXPECT_EQ(status, "0\n");
  // The terminal is back in its usual modes (line editing and echo).
  const std::string stty = ReadFile(dir_ / "stty.txt");
  EXPECT_TRUE(Contains(stty, " icanon") && Contains(stty, " echo ")) << stty;
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
