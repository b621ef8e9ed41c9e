#include "record/control/event_loop.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "record/facts/host_facts.h"

namespace sample::record {

EventLoop::EventLoop(std::function<uint64_t()> now)
    : now_(now ? std::move(now) : std::function<uint64_t()>(MonotonicNowNs)) {}

void EventLoop::AddFd(int fd, Handler on_readable, Handler on_hangup) {
  pollfds_.push_back({fd, POLLIN, 0});
  fds_.push_back({std::move(on_readable), std::move(on_hangup)});
}

EventLoop::TimerId EventLoop::AddTimer(uint64_t at_ns, TimerHandler handler) {
  timers_.push_back({at_ns, std::move(handler)});
  return timers_.size() - 1;
}

void EventLoop::SetTimer(TimerId timer, uint64_t at_ns) { timers_[timer].at_ns = at_ns; }

void EventLoop::AddWakeupHandler(Handler handler) {
  wakeup_handlers_.push_back(std::move(handler));
}

int EventLoop::PollTimeoutMs(uint64_t now_ns) const {
  uint64_t deadline = kNever;
  for (const Timer& timer : timers_) deadline = std::min(deadline, timer.at_ns);
  if (deadline == kNever) return -1;
  // Rounded up: woken a little early, the timer would not be due yet and
  // the loop would go round once more for nothing.
  // Clamped: poll takes an int, and a negative one would wait forever.
  if (now_ns >= deadline) return 0;
  return static_cast<int>(std::min<uint64_t>((deadline - now_ns) / 1000000 + 1, INT_MAX));
}

Result<void> EventLoop::RunReadyFds() {
  for (size_t i = 0; i < pollfds_.size(); ++i) {
    const short revents = pollfds_[i].revents;
    if ((revents & POLLIN) && fds_[i].on_readable) TRY(fds_[i].on_readable());
    if ((revents & (POLLHUP | POLLERR)) && fds_[i].on_hangup) {
      pollfds_[i].fd = -1;  // poll skips negative fds
      TRY(fds_[i].on_hangup());
    }
  }
  return {};
}

Result<void> EventLoop::RunDueTimers(uint64_t now_ns) {
  std::vector<TimerId> due;
  for (TimerId t = 0; t < timers_.size(); ++t) {
    if (timers_[t].at_ns <= now_ns) due.push_back(t);
  }
  std::stable_sort(due.begin(), due.end(),
                   [&](TimerId a, TimerId b) { return timers_[a].at_ns < timers_[b].at_ns; });
  for (TimerId t : due) {
    // An earlier handler of this pass may have re-armed or disarmed it.
    if (timers_[t].at_ns > now_ns) continue;
    timers_[t].at_ns = kNever;
    TRY(timers_[t].handler(now_ns));
  }
  return {};
}

Result<void> EventLoop::Run() {
  stopped_ = false;
  while (!stopped_) {
    for (pollfd& p : pollfds_) p.revents = 0;
    const int ready = poll(pollfds_.data(), pollfds_.size(), PollTimeoutMs(now_()));
    if (ready < 0 && errno != EINTR) return Fail(fmt::format("poll: {}", strerror(errno)));
    if (ready > 0) TRY(RunReadyFds());
    for (const Handler& handler : wakeup_handlers_) TRY(handler());
    TRY(RunDueTimers(now_()));
  }
  return {};
}

}  // namespace sample::record
