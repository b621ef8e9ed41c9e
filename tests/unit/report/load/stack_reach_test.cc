// How much of the stack copies the DWARF walks read, and the copy size the
// report suggests from it.
#include <gtest/gtest.h>

#include "report/load/stack_unwinding.h"

namespace sample::report {
namespace {

TEST(StackReachTest, QuantilesComeInSteps) {
  UnwindStats stats;
  EXPECT_EQ(StackReachWithin(stats, 0.99), 0u);  // no complete walk
  stats.stack_reach[0] = 90;                     // 1-64 bytes
  stats.stack_reach[6] = 9;                      // 385-448 bytes
  stats.stack_reach[56] = 1;                     // 3585-3648 bytes
  EXPECT_EQ(StackReachWithin(stats, 0.5), 64u);
  EXPECT_EQ(StackReachWithin(stats, 0.99), 448u);
  EXPECT_EQ(StackReachWithin(stats, 1.0), 3648u);
  stats.stack_reach[kStackReachSteps - 1] = 1000;  // beyond 64 KiB
  EXPECT_EQ(StackReachWithin(stats, 1.0), kStackReachSteps * kStackReachStep);
}

TEST(StackReachTest, ASmallerCopyIsSuggestedOnlyWhenMostOfItGoesUnread) {
  UnwindStats stats;
  stats.stack_copy_size = 8192;
  stats.stack_reach[6] = 1000;  // every walk within 448 bytes
  // 448 and a quarter more, 560, rounded up to 512 bytes.
  EXPECT_EQ(SmallerStackCopy(stats), 1024u);
  stats.stack_reach[6] = 999;  // too few walks to go by
  EXPECT_EQ(SmallerStackCopy(stats), std::nullopt);
  stats.stack_reach[6] = 980;
  stats.stack_reach[40] = 20;                        // 2% need 2624 bytes: the 99% need 2624 too
  EXPECT_EQ(SmallerStackCopy(stats), std::nullopt);  // over a quarter of 8192
  stats.stack_copy_size = 65528;
  EXPECT_EQ(SmallerStackCopy(stats), 3584u);  // 2624 + 656 = 3280 -> 3584
}

TEST(StackReachTest, NoSmallerCopyWhenTheCopyCutWalksShort) {
  UnwindStats stats;
  stats.stack_copy_size = 8192;
  stats.stack_reach[6] = 1000;
  auto& cut_short = stats.stops[static_cast<size_t>(UnwindStop::kStackTooSmall)];
  cut_short = 10;  // 1% of the walks needed more than the copy: still advised
  EXPECT_EQ(SmallerStackCopy(stats), 1024u);
  cut_short = 1500;  // most walks needed more stack: a smaller copy would cut more
  EXPECT_EQ(SmallerStackCopy(stats), std::nullopt);
}

}  // namespace
}  // namespace sample::report
