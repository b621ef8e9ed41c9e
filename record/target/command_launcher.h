// CommandLauncher: starts the profiled command held before exec.
//
// Start() forks; the child waits on a pipe until Release(), then execs the
// command, so perf events (enable_on_exec) can be opened on its pid first
// and count nothing of our own code. A failed exec is reported back through
// a close-on-exec pipe, so Release() can tell "command not found" from a
// command that started. Owns the pipes; the child is reaped by the caller.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample::record {

class CommandLauncher {
 public:
  // `child_sigmask` is installed in the child before exec (the recorder
  // blocks signals it reads through a signalfd; the command must not
  // inherit that).
  static Result<CommandLauncher> Start(const std::vector<std::string>& argv,
                                       const sigset_t& child_sigmask);

  pid_t pid() const { return pid_; }
  // Lets the child exec; fails with the exec error if it could not.
  Result<void> Release();

 private:
  CommandLauncher(pid_t pid, UniqueFd go, UniqueFd exec_error, std::string name)
      : pid_(pid), go_(std::move(go)), exec_error_(std::move(exec_error)), name_(std::move(name)) {}

  pid_t pid_;
  UniqueFd go_;          // write end: one byte releases the child
  UniqueFd exec_error_;  // read end: errno of a failed exec, EOF on success
  std::string name_;
};

// A command's wait status as a shell's $? gives it: its exit code, or
// 128 + the signal that killed it.
int ShellStatus(int wait_status);

}  // namespace sample::record
