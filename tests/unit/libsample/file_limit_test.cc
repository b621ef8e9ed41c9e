#include "libsample/file_limit.h"

#include <sys/resource.h>

#include <gtest/gtest.h>

namespace sample {
namespace {

TEST(FileLimitTest, SoftLimitRisesToTheHardOne) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max <= 64) {
    GTEST_SKIP() << "the hard open-file limit is " << saved.rlim_max;
  }
  rlimit lowered = saved;
  lowered.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  RaiseOpenFileLimit();
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_EQ(now.rlim_cur, saved.rlim_max);
  EXPECT_EQ(now.rlim_max, saved.rlim_max);
}

}  // namespace
}  // namespace sample
