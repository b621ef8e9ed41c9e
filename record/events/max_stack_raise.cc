#include "record/events/max_stack_raise.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "libsample/perf/perf_event_advice.h"

namespace sample::record {
namespace {

constexpr const char* kSysctl = "/proc/sys/kernel/perf_event_max_stack";

// The helpers below are async-signal-safe (the guardian runs them after
// fork in a threaded process): no allocation.

// The sysctl's value, or -1.
int ReadSysctl() {
  const int fd = open(kSysctl, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[32];
  const ssize_t n = read(fd, text, sizeof(text));
  close(fd);
  int value = 0;
  ssize_t i = 0;
  for (; i < n && text[i] >= '0' && text[i] <= '9' && value < 100000000; ++i) {
    value = value * 10 + (text[i] - '0');
  }
  return i == 0 ? -1 : value;
}

// 0, or the errno of the failed write.
int WriteSysctl(const char* text, size_t size) {
  const int fd = open(kSysctl, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int error = write(fd, text, size) == static_cast<ssize_t>(size) ? 0 : errno;
  close(fd);
  return error;
}

// Writes `old_text` back while the sysctl still holds `raised` (had anyone
// else changed it since, theirs stands). The kernel refuses the write with
// EBUSY while any perf event with call chains exists, on the whole machine:
// the recorder's own until they are freed, another tool's until it ends.
// So it tries again, every 10 ms at first and every second after a while,
// for as long as `patience_ms` allows (< 0: for ever). True once restored
// or no longer ours to restore.
bool Restore(const char* old_text, size_t size, int raised, long patience_ms) {
  long waited_ms = 0;
  for (long pause_ms = 10;; pause_ms = pause_ms < 1000 ? pause_ms * 2 : 1000) {
    if (ReadSysctl() != raised) return true;
    const int error = WriteSysctl(old_text, size);
    if (error == 0) return true;
    if (error != EBUSY || (patience_ms >= 0 && waited_ms >= patience_ms)) return false;
    const timespec pause{pause_ms / 1000, (pause_ms % 1000) * 1000000};
    nanosleep(&pause, nullptr);
    waited_ms += pause_ms;
  }
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
  // The guardian says on this one that it has left the recorder's process
  // group: until then a kill of the group would take it too.
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Fail(fmt::format("--raise-max-stack: pipe: {}", strerror(errno)), errno);
  }
  UniqueFd ready_read(fds[0]), ready_write(fds[1]);
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
    const char ready = 1;
    (void)!write(ready_write.get(), &ready, 1);
    if (keep > 0) close_range(0, keep - 1, 0);
    close_range(keep + 1, ~0U, 0);
    char byte;
    while (read(keep, &byte, 1) < 0 && errno == EINTR) {
    }
    Restore(old_text.data(), old_text.size(), frames, /*patience_ms=*/-1);
    _exit(0);
  }
  waitpid(middle, nullptr, 0);
  ready_write.Reset();
  char ready = 0;
  ssize_t got;
  while ((got = read(ready_read.get(), &ready, 1)) < 0 && errno == EINTR) {
  }
  if (got != 1) {
    return Fail("--raise-max-stack: the process that sets kernel.perf_event_max_stack back "
                "did not start; the sysctl is left as it was");
  }
  read_end.Reset();
  const std::string frames_text = std::to_string(frames) + "\n";
  if (const int error = WriteSysctl(frames_text.data(), frames_text.size()); error != 0) {
    // (the guardian finds the value unchanged when write_end closes)
    return Fail(fmt::format("--raise-max-stack: writing {} to {}: {}{}", frames, kSysctl,
                            strerror(error),
                            error == EBUSY ? " (the kernel refuses while any perf event with "
                                             "call chains exists: is another profiler running?)"
                                           : ""),
                error);
  }
  return RaisedMaxStack(*old, frames, std::move(write_end));
}

RaisedMaxStack::~RaisedMaxStack() {
  if (!guardian_.valid()) return;
  // Up to two seconds for the recorder's own events to be freed; beyond
  // that the guardian goes on trying once the pipe closes.
  const std::string old_text = std::to_string(old_) + "\n";
  Restore(old_text.data(), old_text.size(), raised_, /*patience_ms=*/2000);
  guardian_.Reset();
}

Result<std::optional<RaisedMaxStack>> RaiseMaxStackIfNeeded(uint32_t max_stack, bool raise,
                                                            bool quiet) {
  if (max_stack == 0) return std::nullopt;
  const std::optional<int> limit = ReadPerfEventMaxStack();
  if (!limit || max_stack <= static_cast<uint32_t>(*limit)) return std::nullopt;
  if (!raise) {
    return Fail(fmt::format(
        "--max-stack {} is above the kernel's limit, kernel.perf_event_max_stack = {}: add "
        "--raise-max-stack (root or CAP_SYS_ADMIN; set back when the recording ends), "
        "raise it yourself (sysctl kernel.perf_event_max_stack={}) or use --max-stack {}",
        max_stack, *limit, max_stack, *limit));
  }
  TRY_ASSIGN(auto raised, RaisedMaxStack::Raise(static_cast<int>(max_stack)));
  if (!quiet) {
    fmt::print(stderr,
               "sample-record: kernel.perf_event_max_stack raised from {} to {} for this "
               "recording\n",
               raised.old_value(), max_stack);
  }
  return std::optional<RaisedMaxStack>(std::move(raised));
}

}  // namespace sample::record
