#include "tests/e2e/tmux_session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace sample::e2e {

Tmux::Tmux(const ScratchDir& dir, const std::string& command)
    : dir_(dir),
      socket_("sample-tui-" + std::to_string(getpid()) + "-" + std::to_string(++count_)) {
  started_ = Run({"new-session", "-d", "-s", "t", "-x", "100", "-y", "30", command}).exit_code == 0;
}

Tmux::~Tmux() { Run({"kill-server"}); }

RunResult Tmux::Run(std::vector<std::string> args) const {
  args.insert(args.begin(), {kTmux, "-L", socket_, "-f", "/dev/null"});
  return RunTool(args, dir_);
}

void Tmux::Keys(const std::vector<std::string>& keys) const {
  std::vector<std::string> args = {"send-keys", "-t", "t"};
  args.insert(args.end(), keys.begin(), keys.end());
  Run(args);
}

std::string Tmux::WaitFor(const std::function<bool(const std::string&)>& done,
                          std::chrono::milliseconds limit) const {
  const auto end = Clock::now() + limit;
  std::string screen = Screen();
  while (!done(screen) && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    screen = Screen();
  }
  return screen;
}

std::string SessionCommand(const ScratchDir& dir, const std::string& command) {
  return "cd " + ShellQuote(dir.path()) + " && " + command +
         "; s=$?; stty -a > stty.txt; echo $s > status.tmp && mv status.tmp status; sleep 30";
}

void ExpectQuitAtOnce(const Tmux& tmux, const ScratchDir& dir) {
  const auto quit = Clock::now();
  tmux.Keys({"q"});
  const std::string status = WaitForFile(dir / "status", std::chrono::seconds(2));
  EXPECT_LT(Clock::now() - quit, std::chrono::seconds(1));
  EXPECT_EQ(status, "0\n");
  const std::string stty = ReadFile(dir / "stty.txt");
  EXPECT_TRUE(Contains(stty, " icanon") && Contains(stty, " echo ")) << stty;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

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

std::string WaitForFile(const std::string& path, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    const std::string text = ReadFile(path);
    if (!text.empty() && text.back() == '\n') return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ReadFile(path);
}

}  // namespace sample::e2e
