// Helpers for end-to-end tests: run the built tools in a scratch directory
// and pick apart their text output.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace sample::e2e {

// Built under AddressSanitizer (scripts/test_sanitized.sh), where the tools
// run slower and use ASan's memory: tests of timing and memory figures say
// so and skip (their logic still runs in the normal build).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif


struct RunResult {
  int exit_code = -1;  // shell style: 128 + signal when killed
  std::string out;
  std::string err;
};

// A fresh directory under $TMPDIR, removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The setpriv(1) that runs commands as user nobody.
inline constexpr const char* kSetpriv = "/usr/bin/setpriv";

// argv run as user nobody (uid/gid 65534, no groups), holding
// `capability` (setpriv's name, e.g. "perfmon") when one is given.
std::vector<std::string> AsNobody(std::vector<std::string> argv,
                                  const std::string& capability = "");

// A directory under /tmp owned by user nobody (mode 0755), for runs as
// nobody: the checkout, and so the build, may be in a directory other users
// cannot enter (a 0700 mktemp directory or home), so what nobody runs is
// copied here. Removed with its contents on destruction; path() is empty
// when it could not be made.
class NobodyDir {
 public:
  NobodyDir();
  ~NobodyDir();
  NobodyDir(const NobodyDir&) = delete;
  NobodyDir& operator=(const NobodyDir&) = delete;
  const std::string& path() const { return path_; }
  // Copies the executable `from` in as `name` (mode 0755); false on failure.
  bool Copy(const std::string& from, const std::string& name);

 private:
  std::string path_;
};

// Runs argv to completion, capturing stdout and stderr through files in `dir`.
RunResult RunTool(const std::vector<std::string>& argv, const ScratchDir& dir);

// Starts argv in its own process group with output going to files in `dir`;
// returns the pid. Collect it with Wait().
pid_t Start(const std::vector<std::string>& argv, const ScratchDir& dir, const std::string& tag);
RunResult Wait(pid_t pid, const ScratchDir& dir, const std::string& tag);

// The percentage in the first column of the flat-profile row whose last
// column is `symbol` ("[.] name" is matched on the name), or nullopt.
std::optional<double> OverheadOf(const std::string& report, const std::string& symbol);

// The first-column percentage of the first row containing every one of
// `parts`, or nullopt.
std::optional<double> OverheadOfRow(const std::string& report,
                                    const std::vector<std::string>& parts);

// `word` quoted for /bin/sh (paths may hold spaces or quotes).
std::string ShellQuote(const std::string& word);

// Lines of `text`.
std::vector<std::string> Lines(const std::string& text);

// The "# Samples: N" figure of a report header, or -1.
long SampleCount(const std::string& report);

}  // namespace sample::e2e
