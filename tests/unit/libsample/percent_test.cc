#include "libsample/percent.h"

#include <gtest/gtest.h>

namespace sample {
namespace {

TEST(PercentTest, ShareOfAWholeAndItsText) {
  EXPECT_DOUBLE_EQ(Percentage(1, 4), 25.0);
  EXPECT_DOUBLE_EQ(Percentage(5, 0), 0.0);
  EXPECT_EQ(PercentText(Percentage(1, 3)), "33.33%");
  EXPECT_EQ(PercentText(100), "100.00%");
}

TEST(PercentTest, ParsesPlainNumbersUpToAHundred) {
  double value = -1;
  EXPECT_TRUE(ParsePercent("0.5", &value));
  EXPECT_DOUBLE_EQ(value, 0.5);
  EXPECT_TRUE(ParsePercent("100", &value));
  EXPECT_DOUBLE_EQ(value, 100.0);
  for (const char* bad : {"", "100.5", "-1", "+1", "1e1", "inf", "nan", "5%", " 5", "1.2.3"}) {
    EXPECT_FALSE(ParsePercent(bad, &value)) << bad;
  }
}

}  // namespace
}  // namespace sample
