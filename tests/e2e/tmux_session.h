// Driving a terminal program as a person would, for the e2e tests of the
// report browser and sample-top: a tmux session of its own, keys typed
// with send-keys, the screen read with capture-pane.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {

inline const std::string kTmux = "/usr/bin/tmux";

using Clock = std::chrono::steady_clock;

// A tmux server of its own (a socket name no other test uses), one
// session running `command` in a 100x30 window.
class Tmux {
 public:
  Tmux(const ScratchDir& dir, const std::string& command);
  ~Tmux();
  bool started() const { return started_; }

  RunResult Run(std::vector<std::string> args) const;
  std::string Screen() const { return Run({"capture-pane", "-p", "-t", "t"}).out; }
  void Keys(const std::vector<std::string>& keys) const;
  void Type(const std::string& text) const { Run({"send-keys", "-t", "t", "-l", text}); }

  // Polls the screen until `done` holds; the last screen either way.
  std::string WaitFor(const std::function<bool(const std::string&)>& done,
                      std::chrono::milliseconds limit = std::chrono::seconds(15)) const;

 private:
  const ScratchDir& dir_;
  std::string socket_;
  bool started_ = false;
  static inline int count_ = 0;
};

// The shell command a session runs: `command` in `dir`, then the
// terminal's modes (stty.txt) and its exit status (status, written last:
// a test reads the modes once the status is there), then a pause so the
// session stays for capture-pane.
std::string SessionCommand(const ScratchDir& dir, const std::string& command);

// Types q and expects the program to exit 0 within a second, the
// terminal back in its usual modes (line editing and echo); the session
// runs SessionCommand.
void ExpectQuitAtOnce(const Tmux& tmux, const ScratchDir& dir);

bool Contains(const std::string& text, const std::string& part);

// The line of `screen` holding `part`, and the `after` lines under it.
std::vector<std::string> LinesFrom(const std::string& screen, const std::string& part,
                                   size_t after);

bool AnyContains(const std::vector<std::string>& lines, const std::string& part);

// The sample count of a browser's title line; -1 when there is none.
long TitleSamples(const std::string& screen);

// Waits for `path` to end in a newline (an exit status a session's shell
// writes); its text either way.
std::string WaitForFile(const std::string& path, std::chrono::milliseconds limit);

}  // namespace sample::e2e
