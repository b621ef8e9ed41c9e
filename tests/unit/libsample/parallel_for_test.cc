#include "libsample/parallel_for.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sample {
namespace {

TEST(ParallelForTest, RunsEveryIndexOnce) {
  std::vector<std::atomic<int>> runs(1000);
  ParallelFor(runs.size(), 4, [&](size_t, size_t i) { ++runs[i]; });
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << i;
}

TEST(ParallelForTest, WorkersAreNumberedFromTheCallingThread) {
  std::mutex mutex;
  std::set<size_t> workers;
  bool caller_is_worker_zero = true;
  const std::thread::id caller = std::this_thread::get_id();
  ParallelFor(64, 3, [&](size_t worker, size_t) {
    std::lock_guard lock(mutex);
    workers.insert(worker);
    if ((worker == 0) != (std::this_thread::get_id() == caller)) caller_is_worker_zero = false;
  });
  EXPECT_TRUE(caller_is_worker_zero);
  EXPECT_LT(*workers.rbegin(), 3u);
}

TEST(ParallelForTest, NoMoreThreadsThanItemsAndAtLeastOne) {
  EXPECT_EQ(ParallelThreads(2, 8), 2u);
  EXPECT_EQ(ParallelThreads(100, 8), 8u);
  EXPECT_EQ(ParallelThreads(5, 0), 1u);
  EXPECT_EQ(ParallelThreads(0, 4), 1u);
  size_t calls = 0;
  ParallelFor(0, 4, [&](size_t, size_t) { ++calls; });
  ParallelFor(3, 1, [&](size_t worker, size_t) { calls += worker == 0; });
  EXPECT_EQ(calls, 3u);
}

}  // namespace
}  // namespace sample
