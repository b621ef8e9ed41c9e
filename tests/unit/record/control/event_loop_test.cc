// EventLoop: timers fire in deadline order and only when due, fd handlers
// run on readiness (a hangup once, then the fd is polled no more), the
// order within a pass (fds, after-wakeup work, timers), and the two ways
// out: Stop after the pass, or a failing handler at once.
#include "record/control/event_loop.h"

#include <unistd.h>

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/unique_fd.h"
#include "record/facts/host_facts.h"

namespace sample::record {
namespace {

using ::testing::ElementsAre;

Result<void> Ok() { return {}; }

// A pipe: [0] reads, [1] writes.
struct Pipe {
  Pipe() {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    read_end = UniqueFd(fds[0]);
    write_end = UniqueFd(fds[1]);
  }
  UniqueFd read_end;
  UniqueFd write_end;
};

TEST(EventLoopTest, DueTimersFireEarliestFirstTiesInOrderAdded) {
  // A clock at which every deadline below has passed: one pass fires all.
  EventLoop loop([] { return uint64_t{1000}; });
  std::vector<std::string> fired;
  auto timer = [&](const char* name) {
    return [&fired, &loop, name](uint64_t now) -> Result<void> {
      EXPECT_EQ(now, 1000u);
      fired.push_back(name);
      loop.Stop();
      return {};
    };
  };
  loop.AddTimer(300, timer("300"));
  loop.AddTimer(100, timer("100 first"));
  loop.AddTimer(EventLoop::kNever, timer("never"));
  loop.AddTimer(100, timer("100 second"));
  loop.AddTimer(2000, timer("not yet"));
  loop.AddTimer(0, timer("0"));
  ASSERT_TRUE(loop.Run());
  EXPECT_THAT(fired, ElementsAre("0", "100 first", "100 second", "300"));
}

TEST(EventLoopTest, ATimerWaitsForItsDeadlineAndARearmedOneRecurs) {
  EventLoop loop;
  const uint64_t start = MonotonicNowNs();
  std::vector<uint64_t> times;
  EventLoop::TimerId periodic = 0;
  periodic = loop.AddTimer(start + 2'000'000, [&](uint64_t now) -> Result<void> {
    times.push_back(now);
    if (times.size() == 3) {
      loop.Stop();
    } else {
      loop.SetTimer(periodic, now + 2'000'000);
    }
    return {};
  });
  ASSERT_TRUE(loop.Run());
  ASSERT_EQ(times.size(), 3u);
  EXPECT_GE(times[0], start + 2'000'000);
  EXPECT_GE(times[1], times[0] + 2'000'000);
  EXPECT_GE(times[2], times[1] + 2'000'000);
  EXPECT_EQ(loop.timer_deadline(periodic), EventLoop::kNever);  // fired, not re-armed
}

TEST(EventLoopTest, FdHandlersRunOnReadinessOnly) {
  EventLoop loop;
  Pipe quiet, busy;
  std::vector<std::string> ran;
  loop.AddFd(quiet.read_end.get(), [&] {
    ran.push_back("quiet");
    return Ok();
  });
  loop.AddFd(busy.read_end.get(), [&] {
    char byte;
    EXPECT_EQ(read(busy.read_end.get(), &byte, 1), 1);
    ran.push_back(std::string("busy ") + byte);
    loop.Stop();
    return Ok();
  });
  // No timer: the loop waits on the fds alone.
  ASSERT_EQ(write(busy.write_end.get(), "x", 1), 1);
  ASSERT_TRUE(loop.Run());
  EXPECT_THAT(ran, ElementsAre("busy x"));
}

TEST(EventLoopTest, AHangupIsHandledOnceThenTheFdIsLeftOut) {
  EventLoop loop;
  Pipe gone;
  gone.write_end.Reset();  // the read end now reports POLLHUP forever
  int hangups = 0, passes = 0;
  loop.AddFd(gone.read_end.get(), nullptr, [&] {
    ++hangups;
    return Ok();
  });
  EventLoop::TimerId tick = 0;
  tick = loop.AddTimer(0, [&](uint64_t now) -> Result<void> {
    if (++passes == 3) loop.Stop();
    loop.SetTimer(tick, now + 1'000'000);
    return {};
  });
  ASSERT_TRUE(loop.Run());
  EXPECT_EQ(hangups, 1);
  EXPECT_EQ(passes, 3);
}

TEST(EventLoopTest, APassRunsFdsThenWakeupWorkThenTimersAndStopFinishesIt) {
  EventLoop loop;
  Pipe pipe;
  std::vector<std::string> ran;
  EventLoop::TimerId asked = 0;
  loop.AddFd(pipe.read_end.get(), [&] {
    char byte;
    EXPECT_EQ(read(pipe.read_end.get(), &byte, 1), 1);
    ran.push_back("fd");
    loop.SetTimer(asked, 0);  // due in this pass
    loop.Stop();              // the pass still ends
    return Ok();
  });
  loop.AddWakeupHandler([&] {
    ran.push_back("wakeup");
    return Ok();
  });
  asked = loop.AddTimer(EventLoop::kNever, [&](uint64_t) -> Result<void> {
    ran.push_back("timer");
    return {};
  });
  ASSERT_EQ(write(pipe.write_end.get(), "x", 1), 1);
  ASSERT_TRUE(loop.Run());
  EXPECT_THAT(ran, ElementsAre("fd", "wakeup", "timer"));
}

TEST(EventLoopTest, AFailingHandlerEndsTheLoopWithItsError) {
  EventLoop loop([] { return uint64_t{10}; });
  bool later_ran = false;
  loop.AddTimer(0, [](uint64_t) -> Result<void> { return Fail("the kernel said no"); });
  loop.AddTimer(5, [&](uint64_t) -> Result<void> {
    later_ran = true;
    return {};
  });
  auto ran = loop.Run();
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().message, "the kernel said no");
  EXPECT_FALSE(later_ran);
}

}  // namespace
}  // namespace sample::record
