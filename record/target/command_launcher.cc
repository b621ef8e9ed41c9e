#include "record/target/command_launcher.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sample::record {

Result<CommandLauncher> CommandLauncher::Start(const std::vector<std::string>& argv,
                                               const sigset_t& child_sigmask) {
  if (argv.empty()) return Fail("no command given");
  int go[2], err[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    return Fail(fmt::format("pipe: {}", strerror(errno)));
  }
  // Build argv before fork: the child may only call async-signal-safe code.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) return Fail(fmt::format("fork: {}", strerror(errno)));
  if (pid == 0) {
    close(go[1]);
    close(err[0]);
    sigprocmask(SIG_SETMASK, &child_sigmask, nullptr);
    char byte;
    ssize_t n;
    do {
      n = read(go[0], &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);  // the recorder gave up before releasing us
    execvp(args[0], args.data());
    const int error = errno;
    (void)!write(err[1], &error, sizeof(error));
    _exit(127);
  }
  close(go[0]);
  close(err[1]);
  return CommandLauncher(pid, UniqueFd(go[1]), UniqueFd(err[0]), argv[0]);
}

Result<void> CommandLauncher::Release() {
  const char byte = 1;
  if (write(go_.get(), &byte, 1) != 1) {
    return Fail(fmt::format("cannot start '{}': {}", name_, strerror(errno)));
  }
  go_.Reset();
  int error = 0;
  ssize_t n;
  do {
    n = read(exec_error_.get(), &error, sizeof(error));
  } while (n < 0 && errno == EINTR);
  exec_error_.Reset();
  if (n == sizeof(error)) {
    // As shells do: 127 when there is no such command, 126 when it is
    // there but cannot be executed.
    Error failure{fmt::format("cannot run '{}': {}", name_, strerror(error)), error,
                  error == ENOENT || error == ENOTDIR ? 127 : 126};
    return tl::unexpected(std::move(failure));
  }
  return {};
}

int ShellStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace sample::record
