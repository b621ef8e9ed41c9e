#include "report/views/sort_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sample::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SortKeysTest, Parse) {
  EXPECT_THAT(*ParseSortKeys("comm,dso,sym"),
              ElementsAre(SortKey::kComm, SortKey::kDso, SortKey::kSym));
  EXPECT_THAT(*ParseSortKeys("cpu,pid,tid"),
              ElementsAre(SortKey::kCpu, SortKey::kPid, SortKey::kTid));
  EXPECT_THAT(ParseSortKeys("comm,symbol").error().message, HasSubstr("'symbol'"));
  EXPECT_FALSE(ParseSortKeys("comm,,sym"));
  EXPECT_THAT(*ParseSortKeys("dso,inline"), ElementsAre(SortKey::kDso, SortKey::kInline));
  EXPECT_THAT(ParseSortKeys("sym,inline").error().message,
              HasSubstr("'sym' and 'inline' both name the row's function"));
}

TEST(SortKeysTest, ErrorListsEveryValidKey) {
  EXPECT_EQ(ParseSortKeys("x").error().message,
            "unknown sort key 'x' (valid: comm, pid, tid, dso, sym, cpu, srcline, inline)");
}

TEST(SortKeysTest, NamesParseBackToTheirKeys) {
  for (SortKey key : {SortKey::kComm, SortKey::kPid, SortKey::kTid, SortKey::kDso, SortKey::kSym,
                      SortKey::kCpu, SortKey::kSrcline, SortKey::kInline}) {
    const auto parsed = ParseSortKeys(SortKeyName(key));
    ASSERT_TRUE(parsed) << SortKeyName(key);
    EXPECT_THAT(*parsed, ElementsAre(key));
  }
  EXPECT_EQ(SortKeyName(SortKey::kSrcline), "srcline");
}

}  // namespace
}  // namespace sample::report
