// EventLoop: a loop that owns its sources, as simpleperf's IOEventLoop.
// Each source is registered with its handler: an fd (readable, or hung
// up), a timer (a deadline on CLOCK_MONOTONIC, re-armed by its handler
// when it recurs), and work done after every wakeup, whatever woke it.
//
// Run polls until the nearest deadline or a ready fd, then runs, in this
// order: the handlers of the ready fds (in the order they were added),
// the after-wakeup handlers, and the timers now due, earliest first (ties
// in the order they were added), each at most once a pass. Fds first, so
// that what they say (a command that cancels a timer, a hangup that asks
// for a check at once) holds before the timers; the after-wakeup work
// (draining the rings) before the timers, so that a timer sees everything
// the wakeup brought. The loop goes round until a handler calls Stop (the
// pass it is in is finished) or fails (the loop ends at once with its
// error). Owns the handlers, not the fds.
#pragma once

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "libsample/result.h"

namespace sample::record {

class EventLoop {
 public:
  using Handler = std::function<Result<void>()>;
  // Given the time the pass found the timer due at.
  using TimerHandler = std::function<Result<void>(uint64_t now_ns)>;
  using TimerId = size_t;
  // A timer's deadline when it is not armed.
  static constexpr uint64_t kNever = UINT64_MAX;

  // `now` reads the clock (MonotonicNowNs unless a test gives another).
  explicit EventLoop(std::function<uint64_t()> now = nullptr);

  // `on_readable` runs when `fd` has data (null: nothing to read, it only
  // wakes the loop). `on_hangup`, when given, runs on POLLHUP or POLLERR,
  // and the fd is polled no more: a perf event whose task is gone reports
  // POLLHUP forever.
  void AddFd(int fd, Handler on_readable, Handler on_hangup = nullptr);
  // A timer due at `at_ns` (kNever: not armed yet). It fires once; its
  // handler or any other re-arms it with SetTimer.
  TimerId AddTimer(uint64_t at_ns, TimerHandler handler);
  // Arms (or with kNever disarms) a timer; 0 makes it due in this pass.
  void SetTimer(TimerId timer, uint64_t at_ns);
  uint64_t timer_deadline(TimerId timer) const { return timers_[timer].at_ns; }
  void AddWakeupHandler(Handler handler);

  // Ends the loop once the current pass is done.
  void Stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  Result<void> Run();

 private:
  struct Fd {
    Handler on_readable;
    Handler on_hangup;
  };
  struct Timer {
    uint64_t at_ns;
    TimerHandler handler;
  };

  // How long poll may wait: until the nearest deadline, -1 without one.
  int PollTimeoutMs(uint64_t now_ns) const;
  Result<void> RunReadyFds();
  Result<void> RunDueTimers(uint64_t now_ns);

  std::function<uint64_t()> now_;
  std::vector<pollfd> pollfds_;  // parallel to fds_; fd -1 once hung up
  std::vector<Fd> fds_;
  std::vector<Timer> timers_;
  std::vector<Handler> wakeup_handlers_;
  bool stopped_ = false;
};

}  // namespace sample::record
