// RunInDir: runs a program with a given working directory and captures what
// it prints, for the tests that run sample-report (and python3, chromium,
// go) over the recordings of tests/golden. DEBUGINFOD_URLS is unset in the
// child: the outputs never depend on a debug server the machine names.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sample::testing {

struct RunResult {
  int status = -1;  // exit status; 128 + N for signal N; 127: no such program
  std::string out;
  std::string err;
};

// Runs argv[0] (a path, or a name looked up on PATH) in `dir`, standard
// output and standard error captured apart; `keep_err` false sends standard
// error to /dev/null (Chromium's is noise).
inline RunResult RunInDir(const std::string& dir, const std::vector<std::string>& argv,
                          bool keep_err = true) {
  char out_path[] = "/tmp/sample-run-out-XXXXXX";
  char err_path[] = "/tmp/sample-run-err-XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = keep_err ? mkstemp(err_path) : open("/dev/null", O_WRONLY | O_CLOEXEC);
  RunResult run;
  if (out_fd < 0 || err_fd < 0 || argv.empty()) return run;
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    unsetenv("DEBUGINFOD_URLS");
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(out_fd);
  close(err_fd);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto slurp = [](const char* path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
  run.out = slurp(out_path);
  unlink(out_path);
  if (keep_err) {
    run.err = slurp(err_path);
    unlink(err_path);
  }
  return run;
}

}  // namespace sample::testing
