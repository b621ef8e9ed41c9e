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
            "unknown sort key 'x' (valid: comm, pid, tid, dso, sym, cpu, srcline, inline, "
            "dso_daddr, symbol_daddr)");
}

TEST(SortKeysTest, NamesParseBackToTheirKeys) {
  for (SortKey key :
       {SortKey::kComm, SortKey::kPid, SortKey::kTid, SortKey::kDso, SortKey::kSym, SortKey::kCpu,
        SortKey::kSrcline, SortKey::kInline, SortKey::kDsoDaddr, SortKey::kSymbolDaddr}) {
    const auto parsed = ParseSortKeys(SortKeyName(key));
    ASSERT_TRUE(parsed) << SortKeyName(key);
    EXPECT_THAT(*parsed, ElementsAre(key));
  }
  EXPECT_EQ(SortKeyName(SortKey::kSrcline), "srcline");
}

TEST(SortKeysTest, DataKeysNeedDataAddresses) {
  const std::vector<SortKey> keys = {SortKey::kSym, SortKey::kSymbolDaddr};
  EXPECT_TRUE(CheckDataSortKeys(keys, true, "a.data"));
  EXPECT_TRUE(CheckDataSortKeys({SortKey::kSym}, false, "a.data"));
  const auto refused = CheckDataSortKeys(keys, false, "a.data");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "--sort symbol_daddr: a.data has no data addresses; record with sample-record -d (or "
            "perf record -d)");
}

}  // namespace
}  // namespace sample::report
