#include "libsample/cpu_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sample {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CpuListTest, ParsesTheKernelNotation) {
  EXPECT_THAT(*ParseCpuList("0"), ElementsAre(0));
  EXPECT_THAT(*ParseCpuList("0-3"), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(*ParseCpuList("0,2-3,8\n"), ElementsAre(0, 2, 3, 8));
  // Sorted and without duplicates, whatever the order given.
  EXPECT_THAT(*ParseCpuList("5,1-2,2,0"), ElementsAre(0, 1, 2, 5));
}

TEST(CpuListTest, RejectsWhatIsNotAList) {
  for (const char* bad : {"", "a", "1-", "-1", "3-1", "1,,2", "1;2", "0-70000", "1 2"}) {
    auto parsed = ParseCpuList(bad);
    EXPECT_FALSE(parsed) << "'" << bad << "'";
  }
  EXPECT_THAT(ParseCpuList("0,x").error().message, HasSubstr("'x'"));
}

TEST(CpuListTest, OnlineCpusIncludeTheOneWeRunOn) {
  auto online = OnlineCpus();
  ASSERT_TRUE(online) << online.error().message;
  EXPECT_FALSE(online->empty());
  EXPECT_EQ(online->front(), 0);
}

}  // namespace
}  // namespace sample
