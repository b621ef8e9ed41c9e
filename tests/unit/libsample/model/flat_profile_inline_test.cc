// Rows and inlined calls: a row is the function symbol holding the address
// (perf's rows), the innermost inlined call with SortKey::kInline; call
// trees keep the inlined calls as frames of their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "libsample/model/flat_profile.h"
#include "libsample/model/sample_filter.h"

namespace sample {
namespace {

// func_a, func_b and func_c each with `spin` inlined, called from main,
// 50/30/20 samples.
class FlatProfileInlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    profile_.set_event_names({"cpu-clock"});
    main_ = profile_.InternFunction(1, "main", false, true);
    spin_ = profile_.InternFunction(1, "spin", false, true, /*inlined=*/true);
    const uint32_t comm = profile_.InternComm("prog");
    const char* names[] = {"func_a", "func_b", "func_c"};
    const int counts[] = {50, 30, 20};
    for (int i = 0; i < 3; ++i) {
      funcs_[i] = profile_.InternFunction(1, names[i], false, true);
      for (int n = 0; n < counts[i]; ++n) {
        ProfileSample s;
        s.comm = comm;
        s.period = 1;
        profile_.AddSample(s, std::vector<uint32_t>{spin_, funcs_[i], main_});
      }
    }
  }

  std::string NameOf(const FlatEntry& e) const { return profile_.function(e.function).name; }

  Profile profile_;
  uint32_t main_ = 0, spin_ = 0;
  uint32_t funcs_[3] = {};
};

TEST_F(FlatProfileInlineTest, SelfRowsAreTheFunctionsHoldingTheAddresses) {
  FlatOptions options;
  const FlatProfile flat = BuildFlatProfile(profile_, options);
  ASSERT_EQ(flat.entries.size(), 3u);
  EXPECT_EQ(NameOf(flat.entries[0]), "func_a");
  EXPECT_EQ(flat.entries[0].self_period, 50u);
  EXPECT_EQ(NameOf(flat.entries[1]), "func_b");
  EXPECT_EQ(flat.entries[1].self_period, 30u);
  EXPECT_EQ(NameOf(flat.entries[2]), "func_c");
  EXPECT_EQ(flat.entries[2].self_period, 20u);
}

TEST_F(FlatProfileInlineTest, CallTreeUnderARowKeepsTheInlinedCall) {
  FlatOptions options;
  options.call_graph = true;
  const FlatProfile flat = BuildFlatProfile(profile_, options);
  ASSERT_FALSE(flat.entries.empty());
  const CallNode& root = flat.entries[0].tree;
  ASSERT_EQ(root.children.size(), 1u);
  EXPECT_EQ(root.children[0].function, spin_);  // leaf first: the inlined call
  ASSERT_EQ(root.children[0].children.size(), 1u);
  EXPECT_EQ(root.children[0].children[0].function, funcs_[0]);
}

TEST_F(FlatProfileInlineTest, ChildrenRowsCountInlinedCallsAsTheirHolder) {
  FlatOptions options;
  options.children = true;
  options.call_graph = true;
  const FlatProfile flat = BuildFlatProfile(profile_, options);
  ASSERT_EQ(flat.entries.size(), 4u);  // main and the three functions; no spin
  EXPECT_EQ(NameOf(flat.entries[0]), "main");
  EXPECT_EQ(flat.entries[0].children_period, 100u);
  EXPECT_EQ(NameOf(flat.entries[1]), "func_a");
  EXPECT_EQ(flat.entries[1].children_period, 50u);  // once per sample, not twice
  EXPECT_EQ(flat.entries[1].self_period, 50u);
  // Caller order under func_a: func_a -> spin (inlined).
  const CallNode& root = flat.entries[1].tree;
  ASSERT_EQ(root.children.size(), 1u);
  EXPECT_EQ(root.children[0].function, funcs_[0]);
  ASSERT_EQ(root.children[0].children.size(), 1u);
  EXPECT_EQ(root.children[0].children[0].function, spin_);
}

TEST_F(FlatProfileInlineTest, InlineKeyMakesTheInnermostCallTheRow) {
  FlatOptions options;
  options.sort_keys = {SortKey::kInline};
  FlatProfile flat = BuildFlatProfile(profile_, options);
  ASSERT_EQ(flat.entries.size(), 1u);
  EXPECT_EQ(flat.entries[0].function, spin_);
  EXPECT_EQ(flat.entries[0].self_period, 100u);

  options.children = true;
  flat = BuildFlatProfile(profile_, options);
  ASSERT_EQ(flat.entries.size(), 5u);  // spin, main and the three functions
  EXPECT_EQ(flat.entries[0].function, spin_);  // ties with main, more self
  EXPECT_EQ(flat.entries[0].children_period, 100u);
  EXPECT_EQ(NameOf(flat.entries[1]), "main");
}

// --max-stack keeps frames, not addresses: a cut inside an address's
// inlined calls leaves the row the function holding them, as without it.
TEST_F(FlatProfileInlineTest, ChainCutInsideInlinedCallsKeepsTheirHoldersRows) {
  FlatOptions options;
  options.max_stack = 1;  // only the inlined call remains of each chain
  for (const bool children : {false, true}) {
    options.children = children;
    const FlatProfile flat = BuildFlatProfile(profile_, options);
    ASSERT_EQ(flat.entries.size(), 3u) << children;
    EXPECT_EQ(flat.entries[0].function, funcs_[0]);
    EXPECT_EQ(flat.entries[0].self_period, 50u);
    EXPECT_EQ(flat.entries[2].function, funcs_[2]);
  }
}

TEST_F(FlatProfileInlineTest, SymbolFilterMatchesTheHolderOrItsInlinedCall) {
  SampleFilterOptions by_holder;
  by_holder.symbols = {"func_b"};
  const SampleFilter holder(by_holder);
  FlatOptions options;
  options.filter = &holder;
  EXPECT_EQ(BuildFlatProfile(profile_, options).samples, 30u);

  SampleFilterOptions by_inlined;
  by_inlined.symbols = {"spin"};
  const SampleFilter inlined(by_inlined);
  options.filter = &inlined;
  EXPECT_EQ(BuildFlatProfile(profile_, options).samples, 100u);

  SampleFilterOptions by_caller;
  by_caller.symbols = {"main"};  // not the sampled address's function
  const SampleFilter caller(by_caller);
  options.filter = &caller;
  EXPECT_EQ(BuildFlatProfile(profile_, options).samples, 0u);
}

// HolderFrames gives, in one pass, what HolderIndex gives frame by frame:
// runs of inlined calls end at their holder, a chain cut inside a run
// leaves the run its last frame, and `kept` stops early.
TEST(HolderFramesTest, EqualsHolderIndexAtEveryFrame) {
  Profile profile;
  const uint32_t f = profile.InternFunction(1, "f", false, true);
  const uint32_t g = profile.InternFunction(1, "g", false, true);
  const uint32_t i1 = profile.InternFunction(1, "i1", false, true, /*inlined=*/true);
  const uint32_t i2 = profile.InternFunction(1, "i2", false, true, /*inlined=*/true);
  const std::vector<std::vector<uint32_t>> chains = {
      {f}, {i1, f}, {i1, i2, f, g}, {f, i1, i2, g, i2}, {i1, i2}, {}, {g, f, i1, i1, i1, f}};
  std::vector<uint32_t> holders;
  for (const auto& chain : chains) {
    for (size_t kept = 0; kept <= chain.size() + 1; ++kept) {
      HolderFrames(profile, chain, kept, holders);
      ASSERT_EQ(holders.size(), std::min(kept, chain.size()));
      for (size_t i = 0; i < holders.size(); ++i) {
        EXPECT_EQ(holders[i], chain[HolderIndex(profile, chain, i)]) << "frame " << i;
      }
    }
  }
}

// 100,000 inlined calls at one address (a crafted recording's; the report
// cuts such chains at load, but the profile stands on its own): rows and
// children are those of the function holding them. Each view walked the
// inlined run again per frame: 10^10 steps, which this test would not
// finish; and with --sort inline every call was searched for among the
// others (AddChildren).
TEST(HolderFramesTest, DeepInlineChainIsOnePass) {
  Profile profile;
  profile.set_event_names({"cpu-clock"});
  std::vector<uint32_t> chain;
  for (int i = 0; i < 100000; ++i) {
    chain.push_back(
        profile.InternFunction(1, "inl" + std::to_string(i), false, true, /*inlined=*/true));
  }
  chain.push_back(profile.InternFunction(1, "holder", false, true));
  chain.push_back(profile.InternFunction(1, "main", false, true));
  ProfileSample s;
  s.comm = profile.InternComm("prog");
  s.period = 1;
  profile.AddSample(s, chain);
  FlatOptions options;
  options.children = true;
  FlatProfile flat = BuildFlatProfile(profile, options);
  ASSERT_EQ(flat.entries.size(), 2u);
  EXPECT_EQ(profile.function(flat.entries[0].function).name, "holder");
  EXPECT_EQ(flat.entries[0].self_period, 1u);
  EXPECT_EQ(flat.entries[0].children_period, 1u);
  EXPECT_EQ(profile.function(flat.entries[1].function).name, "main");
  options.sort_keys = {SortKey::kInline};
  flat = BuildFlatProfile(profile, options);
  EXPECT_EQ(flat.entries.size(), chain.size());
  for (const FlatEntry& e : flat.entries) EXPECT_EQ(e.children_period, 1u);
}

}  // namespace
}  // namespace sample
