// Tests for the parsing of what read(2) returns from a perf event fd
// (record/counting/counters.h), in the layouts of perf_event_open(2)'s
// "Reading results": one event or a group, with and without the times, ids
// and lost counts, and too few bytes for the format.
#include "record/counting/counters.h"

#include <linux/perf_event.h>

#include <gtest/gtest.h>

namespace sample::record {
namespace {

using Values = std::vector<std::pair<uint64_t, uint64_t>>;

constexpr uint64_t kTimes = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

TEST(EventCountersTest, OneEventValueThenTimesThenId) {
  const std::vector<uint64_t> words = {1234, 800, 500, 77};
  auto r = ParseCounterRead(words, kTimes | PERF_FORMAT_ID);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->enabled, 800u);
  EXPECT_EQ(r->running, 500u);
  EXPECT_EQ(r->values, (Values{{1234, 77}}));
}

TEST(EventCountersTest, OneEventOnlyRunningTime) {
  const std::vector<uint64_t> words = {9, 40};
  auto r = ParseCounterRead(words, PERF_FORMAT_TOTAL_TIME_RUNNING);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->enabled, 0u);
  EXPECT_EQ(r->running, 40u);
  EXPECT_EQ(r->values, (Values{{9, 0}}));
}

TEST(EventCountersTest, GroupTimesThenEachValueWithItsId) {
  const std::vector<uint64_t> words = {3, 1000, 600, 11, 101, 22, 102, 33, 103};
  auto r = ParseCounterRead(words, kTimes | PERF_FORMAT_GROUP | PERF_FORMAT_ID);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->enabled, 1000u);
  EXPECT_EQ(r->running, 600u);
  EXPECT_EQ(r->values, (Values{{11, 101}, {22, 102}, {33, 103}}));
}

TEST(EventCountersTest, GroupWithLostCounts) {
  const std::vector<uint64_t> words = {2, 5, 1, 0, 6, 2, 0};
  auto r = ParseCounterRead(words, PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->values, (Values{{5, 1}, {6, 2}}));
}

TEST(EventCountersTest, TooFewWordsForTheFormatFail) {
  const std::vector<uint64_t> group = {3, 1000, 600, 11, 101, 22, 102, 33, 103};
  const uint64_t format = kTimes | PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  for (size_t n = 0; n < group.size(); ++n) {
    auto r = ParseCounterRead(std::span(group).first(n), format);
    EXPECT_FALSE(r.has_value()) << n;
  }
  const std::vector<uint64_t> one = {1234, 800};
  EXPECT_FALSE(ParseCounterRead(one, kTimes).has_value());
  EXPECT_FALSE(ParseCounterRead({}, 0).has_value());
}

TEST(EventCountersTest, ThreadCopiesOnEachCpuAreEnabledOnce) {
  // Thread 5 ran 60 ns on CPU 0 and 40 on CPU 1 of the 100 it was enabled;
  // thread 6 ran 30 of 50 on CPU 0 only (the kernel multiplexed it).
  const std::vector<FdTotals> fds = {
      {0, 5, {600, 100, 60}}, {0, 5, {400, 100, 40}},  {0, 6, {300, 50, 30}},
      {0, 6, {0, 50, 0}},     {1, -1, {10, 100, 100}}, {1, -1, {20, 100, 50}},
  };
  const auto sums = SumFdTotals(fds, 2);
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_EQ(sums[0].count, 1300u);
  EXPECT_EQ(sums[0].enabled, 150u);  // 100 + 50, not 300
  EXPECT_EQ(sums[0].running, 130u);  // thread 5 ran all the time, thread 6 60% of it
  // CPU-wide copies are enabled on each CPU: the times add up.
  EXPECT_EQ(sums[1].count, 30u);
  EXPECT_EQ(sums[1].enabled, 200u);
  EXPECT_EQ(sums[1].running, 150u);
}

}  // namespace
}  // namespace sample::record
