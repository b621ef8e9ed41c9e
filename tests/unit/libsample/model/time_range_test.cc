#include "libsample/model/time_range.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sample {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kFirst = 1'000'000'000;  // 1 s
constexpr uint64_t kLast = 11'000'000'000;  // 11 s: 10 s long

TEST(TimeRangeTest, SecondsAfterTheFirstSample) {
  EXPECT_THAT(*ParseTimeRanges("1.5,2", kFirst, kLast),
              ElementsAre(TimeRange{2'500'000'000, 3'000'000'001}));
  EXPECT_THAT(*ParseTimeRanges("2,", kFirst, kLast),
              ElementsAre(TimeRange{3'000'000'000, UINT64_MAX}));
  EXPECT_THAT(*ParseTimeRanges(",0.5", kFirst, kLast),
              ElementsAre(TimeRange{kFirst, 1'500'000'001}));
  EXPECT_THAT(*ParseTimeRanges("3", kFirst, kLast),
              ElementsAre(TimeRange{4'000'000'000, UINT64_MAX}));
}

TEST(TimeRangeTest, PercentSlices) {
  // The second 10% slice: 1 s to 2 s after the first sample.
  EXPECT_THAT(*ParseTimeRanges("10%/2", kFirst, kLast),
              ElementsAre(TimeRange{2'000'000'000, 3'000'000'000}));
  EXPECT_THAT(*ParseTimeRanges("0%-10%", kFirst, kLast),
              ElementsAre(TimeRange{kFirst, 2'000'000'000}));
  // The last slice includes the last sample.
  EXPECT_THAT(*ParseTimeRanges("50%/2", kFirst, kLast),
              ElementsAre(TimeRange{6'000'000'000, kLast + 1}));
  EXPECT_THAT(
      *ParseTimeRanges("10%/1,10%/3", kFirst, kLast),
      ElementsAre(TimeRange{kFirst, 2'000'000'000}, TimeRange{3'000'000'000, 4'000'000'000}));
}

TEST(TimeRangeTest, MistakesAreNamed) {
  EXPECT_THAT(ParseTimeRanges("2,1", kFirst, kLast).error().message, HasSubstr("end before start"));
  EXPECT_THAT(ParseTimeRanges(",", kFirst, kLast).error().message, HasSubstr("'"));
  EXPECT_THAT(ParseTimeRanges("a,b", kFirst, kLast).error().message, HasSubstr("not a number"));
  EXPECT_THAT(ParseTimeRanges("10%/0", kFirst, kLast).error().message, HasSubstr("10%/0"));
  EXPECT_THAT(ParseTimeRanges("10%/11", kFirst, kLast).error().message, HasSubstr("past 100%"));
  EXPECT_THAT(ParseTimeRanges("20%-10%", kFirst, kLast).error().message, HasSubstr("20%-10%"));
  EXPECT_THAT(ParseTimeRanges("110%-120%", kFirst, kLast).error().message,
              HasSubstr("cannot parse"));
  EXPECT_FALSE(ParseTimeRanges("10%", kFirst, kLast));
  EXPECT_FALSE(ParseTimeRanges("1,2,3", kFirst, kLast));
}

TEST(TimeRangeTest, OneSpecServesRecordingsOfAnyLength) {
  // Parsed once (sample-report --diff applies it to two recordings).
  auto spec = TimeSpec::Parse("10%/2,1,2");
  EXPECT_FALSE(spec);  // seconds and percentages do not mix
  spec = TimeSpec::Parse("10%/2");
  ASSERT_TRUE(spec);
  EXPECT_THAT(spec->Windows(kFirst, kLast), ElementsAre(TimeRange{2'000'000'000, 3'000'000'000}));
  EXPECT_THAT(spec->Windows(0, 100), ElementsAre(TimeRange{10, 20}));
  auto seconds = TimeSpec::Parse("1,");
  ASSERT_TRUE(seconds);
  EXPECT_THAT(seconds->Windows(kFirst, kLast), ElementsAre(TimeRange{2'000'000'000, UINT64_MAX}));
}

}  // namespace
}  // namespace sample
