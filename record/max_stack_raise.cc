#include "record/max_stack_raise.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "libsample/perf/perf_event_advice.h"

namespace sample::record {
namespace {

constexpr const char* kSysctl = "/proc/sys/kernel/perf_event_max_stack";

// Async-signal-safe (the guardian calls it after fork in a threaded
// process): no allocation.
bool WriteSysctl(const char* text, size_t size) {
  const int fd = open(kSysctl, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text, size) == static_cast<ssize_t>(size);
  close(fd);
  return ok;
}

bool WriteSysctl(int value) {
  const std::string text = std::to_string(value) + "\n";
  return WriteSysctl(text.data(), text.size());
}

}  // namespace

Result<RaisedMaxStack> RaisedMaxStack::Raise(int frames) {
  const std::optional<int> old = ReadPerfEventMaxStack();
  if (!old) return Fail(fmt::format("--raise-max-stack: cannot read {}", kSysctl));
  if (access(kSysctl, W_OK) != 0) {
    return Fail(fmt::format("--raise-max-stack: {} is not writable here (it needs root or "
                            "CAP_SYS_ADMIN): {}",
                            kSysctl, strerror(errno)),
                errno);
  }
  const std::string old_text = std::to_string(*old) + "\n";  // made before fork
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Fail(fmt::format("--raise-max-stack: pipe: {}", strerror(errno)), errno);
  }
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  // Forked twice, so that the guardian is nobody's child here: no zombie
  // for the recorder to reap, and no exit status it could mistake for its
  // command's.
  const pid_t middle = fork();
  if (middle < 0) return Fail(fmt::format("--raise-max-stack: fork: {}", strerror(errno)), errno);
  if (middle == 0) {
    if (fork() != 0) _exit(0);
    // The guardian: out of the recorder's session, deaf to the signals
    // that stop it, holding no descriptor but the pipe's read end (not the
    // output file, the events or the command's pipes); waits for the
    // pipe's end, then restores.
    setsid();
    for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) signal(signo, SIG_IGN);
    const int keep = read_end.get();
    if (keep > 0) close_range(0, keep - 1, 0);
    close_range(keep + 1, ~0U, 0);
    char byte;
    while (read(keep, &byte, 1) < 0 && errno == EINTR) {
    }
    WriteSysctl(old_text.data(), old_text.size());
    _exit(0);
  }
  waitpid(middle, nullptr, 0);
  read_end.Reset();
  if (!WriteSysctl(frames)) {
    return Fail(fmt::format("--raise-max-stack: writing {} to {}: {}", frames, kSysctl,
                            strerror(errno)),
                errno);  // the guardian restores the unchanged value when write_end closes
  }
  return RaisedMaxStack(*old, std::move(write_end));
}

RaisedMaxStack::~RaisedMaxStack() {
  if (!guardian_.valid()) return;
  WriteSysctl(old_);
  guardian_.Reset();  // the guardian writes it once more and exits
}

}  // namespace sample::record
