#include "libsample/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sample {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ProfileTest, SortKeysParse) {
  EXPECT_THAT(*ParseSortKeys("comm,dso,sym"),
              ElementsAre(SortKey::kComm, SortKey::kDso, SortKey::kSym));
  EXPECT_THAT(*ParseSortKeys("cpu,pid,tid"), ElementsAre(SortKey::kCpu, SortKey::kPid, SortKey::kTid));
  EXPECT_THAT(ParseSortKeys("comm,symbol").error().message, HasSubstr("'symbol'"));
  EXPECT_FALSE(ParseSortKeys("comm,,sym"));
}

class FlatProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    profile_.set_event_names({"cpu-clock", "page-faults"});
    main_ = profile_.InternFunction(2, "main", false, true);
    a_ = profile_.InternFunction(2, "a", false, true);
    b_ = profile_.InternFunction(2, "b", false, true);
    comm_ = profile_.InternComm("prog");
  }
  void Add(std::vector<uint32_t> frames, uint64_t period, uint32_t event = 0) {
    ProfileSample s;
    s.event = event;
    s.comm = comm_;
    s.period = period;
    profile_.AddSample(s, frames);
  }
  const FlatEntry* Find(const std::vector<FlatEntry>& entries, uint32_t function) {
    for (const FlatEntry& e : entries) {
      if (e.function == function) return &e;
    }
    return nullptr;
  }

  Profile profile_;
  uint32_t main_ = 0, a_ = 0, b_ = 0, comm_ = 0;
};

TEST_F(FlatProfileTest, SelfAndChildrenArePeriodWeighted) {
  Add({a_, main_}, 30);          // main -> a
  Add({b_, a_, main_}, 60);      // main -> a -> b
  Add({a_, b_, a_, main_}, 10);  // recursion: a counts once
  Add({main_}, 999, 1);          // another event: never mixed in
  EXPECT_EQ(profile_.total_period(0), 100u);
  EXPECT_EQ(profile_.sample_count(0), 3u);

  FlatOptions options;
  options.sort_keys = {SortKey::kSym};
  options.children = true;
  const auto entries = BuildFlatProfile(profile_, options);
  ASSERT_EQ(entries.size(), 3u);
  // Sorted by children period; a and main tie at 100, a has more self.
  EXPECT_EQ(entries[0].function, a_);
  EXPECT_EQ(entries[1].function, main_);
  EXPECT_EQ(entries[1].children_period, 100u);
  EXPECT_EQ(entries[1].self_period, 0u);
  const FlatEntry* a = Find(entries, a_);
  EXPECT_EQ(a->self_period, 40u);
  EXPECT_EQ(a->children_period, 100u);
  EXPECT_EQ(a->children_samples, 3u);
  const FlatEntry* b = Find(entries, b_);
  EXPECT_EQ(b->self_period, 60u);
  EXPECT_EQ(b->children_period, 70u);

  options.children = false;
  const auto flat = BuildFlatProfile(profile_, options);
  ASSERT_EQ(flat.size(), 2u);  // main never is a leaf of event 0
  EXPECT_EQ(flat[0].function, b_);
  EXPECT_EQ(flat[1].function, a_);
  EXPECT_EQ(flat[1].self_samples, 2u);

  options.event = 1;
  const auto faults = BuildFlatProfile(profile_, options);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].self_period, 999u);
}

TEST_F(FlatProfileTest, CallTreesFollowTheOrderOfTheMode) {
  Add({a_, main_}, 30);
  Add({b_, a_, main_}, 60);
  FlatOptions options;
  options.sort_keys = {SortKey::kSym};
  options.call_graph = true;

  // No children: from the leaf towards its callers.
  const auto flat = BuildFlatProfile(profile_, options);
  const FlatEntry* b = Find(flat, b_);
  ASSERT_EQ(b->tree.children.size(), 1u);
  const CallNode& leaf = b->tree.children[0];
  EXPECT_EQ(leaf.function, b_);
  ASSERT_EQ(leaf.children.size(), 1u);
  EXPECT_EQ(leaf.children[0].function, a_);
  EXPECT_EQ(leaf.children[0].children[0].function, main_);

  // Children: from the entry towards its callees, branching by period.
  options.children = true;
  const auto children = BuildFlatProfile(profile_, options);
  const FlatEntry* main = Find(children, main_);
  ASSERT_EQ(main->tree.children.size(), 1u);
  const CallNode& root = main->tree.children[0];
  EXPECT_EQ(root.function, main_);
  EXPECT_EQ(root.period, 90u);
  ASSERT_EQ(root.children.size(), 1u);
  const CallNode& a = root.children[0];
  EXPECT_EQ(a.function, a_);
  EXPECT_EQ(a.period, 90u);
  ASSERT_EQ(a.children.size(), 1u);  // 30 end in a itself, 60 go on to b
  EXPECT_EQ(a.children[0].function, b_);
  EXPECT_EQ(a.children[0].period, 60u);
}

TEST_F(FlatProfileTest, KeysWithoutSymbolMergeFunctions) {
  Add({a_, main_}, 30);
  Add({b_, main_}, 70);
  FlatOptions options;
  options.sort_keys = {SortKey::kComm, SortKey::kDso};
  const auto entries = BuildFlatProfile(profile_, options);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].self_period, 100u);
  EXPECT_EQ(entries[0].dso, 2u);
  EXPECT_EQ(entries[0].function, FlatEntry::kAny);
}

}  // namespace
}  // namespace sample
