#include "libsample/model/flat_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/model/flat_profile_keys.h"
#include "libsample/model/sample_filter.h"

namespace sample {
namespace {

using ::testing::ElementsAre;

class FlatProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    profile_.set_event_names({"cpu-clock", "page-faults"});
    main_ = profile_.InternFunction(2, "main", false, true);
    a_ = profile_.InternFunction(2, "a", false, true);
    b_ = profile_.InternFunction(2, "b", false, true);
    comm_ = profile_.InternComm("prog");
  }
  void Add(std::vector<uint32_t> frames, uint64_t period, uint32_t event = 0, ProfileSample s = {},
           std::vector<MemberCount> reads = {}) {
    s.event = event;
    if (s.comm == 0) s.comm = comm_;
    s.period = period;
    profile_.AddSample(s, frames, {}, reads);
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
  const auto entries = BuildFlatProfile(profile_, options).entries;
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
  const auto flat = BuildFlatProfile(profile_, options).entries;
  ASSERT_EQ(flat.size(), 2u);  // main never is a leaf of event 0
  EXPECT_EQ(flat[0].function, b_);
  EXPECT_EQ(flat[1].function, a_);
  EXPECT_EQ(flat[1].self_samples, 2u);

  options.event = 1;
  const auto faults = BuildFlatProfile(profile_, options).entries;
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
  const auto flat = BuildFlatProfile(profile_, options).entries;
  const FlatEntry* b = Find(flat, b_);
  ASSERT_EQ(b->tree.children.size(), 1u);
  const CallNode& leaf = b->tree.children[0];
  EXPECT_EQ(leaf.function, b_);
  ASSERT_EQ(leaf.children.size(), 1u);
  EXPECT_EQ(leaf.children[0].function, a_);
  EXPECT_EQ(leaf.children[0].children[0].function, main_);

  // Children: from the entry towards its callees, branching by period.
  options.children = true;
  const auto children = BuildFlatProfile(profile_, options).entries;
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
  const auto entries = BuildFlatProfile(profile_, options).entries;
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].self_period, 100u);
  EXPECT_EQ(entries[0].dso, 2u);
  EXPECT_EQ(entries[0].function, FlatEntry::kAny);
}

TEST_F(FlatProfileTest, CallerOrderWithoutChildrenStartsAtTheOutermostFrame) {
  Add({b_, a_, main_}, 60);
  FlatOptions options;
  options.sort_keys = {SortKey::kSym};
  options.call_graph = true;
  options.order = CallOrder::kCaller;
  const auto flat = BuildFlatProfile(profile_, options).entries;
  const FlatEntry* b = Find(flat, b_);
  ASSERT_EQ(b->tree.children.size(), 1u);
  EXPECT_EQ(b->tree.children[0].function, main_);
  EXPECT_EQ(b->tree.children[0].children[0].function, a_);
  EXPECT_EQ(b->tree.children[0].children[0].children[0].function, b_);
}

TEST_F(FlatProfileTest, CalleeOrderWithChildrenGoesToTheCallers) {
  Add({b_, a_, main_}, 60);
  Add({a_, main_}, 40);
  FlatOptions options;
  options.sort_keys = {SortKey::kSym};
  options.children = true;
  options.call_graph = true;
  options.order = CallOrder::kCallee;
  const auto entries = BuildFlatProfile(profile_, options).entries;
  const FlatEntry* a = Find(entries, a_);
  ASSERT_EQ(a->tree.children.size(), 1u);
  const CallNode& root = a->tree.children[0];
  EXPECT_EQ(root.function, a_);
  EXPECT_EQ(root.period, 100u);
  ASSERT_EQ(root.children.size(), 1u);
  EXPECT_EQ(root.children[0].function, main_);
}

TEST_F(FlatProfileTest, MaxStackCutsChainsFromTheLeaf) {
  Add({b_, a_, main_}, 60);
  FlatOptions options;
  options.sort_keys = {SortKey::kSym};
  options.children = true;
  options.max_stack = 2;
  const auto entries = BuildFlatProfile(profile_, options).entries;
  EXPECT_EQ(Find(entries, main_), nullptr);  // beyond two frames
  EXPECT_EQ(Find(entries, a_)->children_period, 60u);
}

TEST_F(FlatProfileTest, FilteredSamplesLeaveTheTotals) {
  ProfileSample on_cpu1;
  on_cpu1.cpu = 1;
  on_cpu1.pid = 7;
  on_cpu1.time = 200;
  Add({a_, main_}, 30, 0, on_cpu1);
  ProfileSample on_cpu0;
  on_cpu0.time = 100;
  Add({b_, main_}, 70, 0, on_cpu0);
  Add({b_, main_}, 5, 1);  // another event

  SampleFilterOptions by_cpu;
  by_cpu.cpus = {1};
  SampleFilter cpu_filter(by_cpu);
  FlatOptions options;
  options.sort_keys = {SortKey::kSym};
  options.filter = &cpu_filter;
  auto flat = BuildFlatProfile(profile_, options);
  EXPECT_EQ(flat.samples, 1u);
  EXPECT_EQ(flat.period, 30u);
  ASSERT_EQ(flat.entries.size(), 1u);
  EXPECT_EQ(flat.entries[0].function, a_);

  SampleFilterOptions by_symbol;
  by_symbol.symbols = {"b"};
  by_symbol.dsos = {"/lib/x.so"};
  profile_.set_dso_names({"[unknown]", "[kernel.kallsyms]", "/lib/x.so"});
  SampleFilter symbol_filter(by_symbol);
  options.filter = &symbol_filter;
  flat = BuildFlatProfile(profile_, options);
  EXPECT_EQ(flat.period, 70u);
  by_symbol.dsos = {"x.so"};  // a file name matches too
  symbol_filter = SampleFilter(by_symbol);
  EXPECT_EQ(BuildFlatProfile(profile_, options).period, 70u);

  SampleFilterOptions by_time;
  by_time.times = {TimeRange{150, 250}};
  by_time.time_given = true;
  SampleFilter time_filter(by_time);
  options.filter = &time_filter;
  EXPECT_EQ(BuildFlatProfile(profile_, options).period, 30u);
  EXPECT_EQ(profile_.first_time(), 0u);  // the other event's sample has time 0
  EXPECT_EQ(profile_.last_time(), 200u);

  SampleFilterOptions by_comm;
  by_comm.comms = {"other"};
  SampleFilter comm_filter(by_comm);
  options.filter = &comm_filter;
  EXPECT_EQ(BuildFlatProfile(profile_, options).samples, 0u);
  EXPECT_FALSE(comm_filter.empty());
  EXPECT_TRUE(SampleFilter().empty());
}

TEST_F(FlatProfileTest, GroupMemberCountsAreSummedPerEntry) {
  profile_.set_event_names({"cpu-clock", "task-clock", "page-faults"});
  profile_.set_group_members(0, {1, 2});
  Add({a_, main_}, 10, 0, {}, {{1, 11}, {2, 1}});
  Add({a_, main_}, 10, 0, {}, {{1, 9}});
  Add({b_, main_}, 10, 0, {}, {{1, 10}, {2, 4}});
  FlatOptions options;
  options.sort_keys = {SortKey::kSym};
  options.children = true;
  const auto flat = BuildFlatProfile(profile_, options);
  EXPECT_THAT(flat.member_periods, ElementsAre(30u, 5u));
  const FlatEntry* a = Find(flat.entries, a_);
  EXPECT_THAT(a->member_self, ElementsAre(20u, 1u));
  const FlatEntry* main = Find(flat.entries, main_);
  EXPECT_THAT(main->member_self, ElementsAre(0u, 0u));
  EXPECT_THAT(main->member_children, ElementsAre(30u, 5u));
  EXPECT_THAT(profile_.group_members(0), ElementsAre(1u, 2u));
  EXPECT_TRUE(profile_.group_members(1).empty());
}

TEST_F(FlatProfileTest, SamplesWithOneStackStayApartByTheirSortKeys) {
  ProfileSample pid1;
  pid1.pid = 1;
  ProfileSample pid2;
  pid2.pid = 2;
  Add({a_, main_}, 10, 0, pid1);
  Add({a_, main_}, 20, 0, pid2);
  Add({a_, main_}, 40, 0, pid2);
  FlatOptions options;
  options.sort_keys = {SortKey::kPid, SortKey::kSym};
  const auto by_pid = BuildFlatProfile(profile_, options).entries;
  ASSERT_EQ(by_pid.size(), 2u);
  EXPECT_EQ(by_pid[0].pid, 2u);
  EXPECT_EQ(by_pid[0].self_period, 60u);
  EXPECT_EQ(by_pid[0].self_samples, 2u);
  EXPECT_EQ(by_pid[1].pid, 1u);
  EXPECT_EQ(by_pid[1].self_period, 10u);

  options.sort_keys = {SortKey::kSym};
  const auto by_sym = BuildFlatProfile(profile_, options).entries;
  ASSERT_EQ(by_sym.size(), 1u);
  EXPECT_EQ(by_sym[0].pid, FlatEntry::kAny);
  EXPECT_EQ(by_sym[0].self_period, 70u);
}

TEST_F(FlatProfileTest, KeyMakerFillsOnlyTheFieldsOfTheSortKeys) {
  ProfileSample s;
  s.comm = comm_;
  s.pid = 7;
  s.tid = 8;
  s.cpu = 1;
  profile_.AddSample(s, std::vector<uint32_t>{b_, a_, main_});
  const ProfileSample& added = profile_.samples().back();

  const KeyMaker by_pid_sym(profile_, {SortKey::kPid, SortKey::kSym});
  const EntryKey entry = by_pid_sym.Entry(added, a_, a_);
  EXPECT_EQ(entry.pid, 7u);
  EXPECT_EQ(entry.function, a_);
  EXPECT_EQ(entry.comm, FlatEntry::kAny);
  EXPECT_EQ(entry.tid, FlatEntry::kAny);
  EXPECT_EQ(entry.cpu, FlatEntry::kAny);
  EXPECT_EQ(entry.dso, FlatEntry::kAny);
  EXPECT_EQ(entry.srcline, FlatEntry::kAny);
  EXPECT_NE(entry, by_pid_sym.Entry(added, b_, b_));

  const KeyMaker by_cpu_dso(profile_, {SortKey::kCpu, SortKey::kDso});
  // Frames of one DSO share an entry when the symbol is not a key.
  EXPECT_EQ(by_cpu_dso.Entry(added, a_, a_), by_cpu_dso.Entry(added, b_, b_));
  EXPECT_EQ(by_cpu_dso.Entry(added, a_, a_).dso, 2u);
  EXPECT_EQ(EntryKeyHash()(by_cpu_dso.Entry(added, a_, a_)),
            EntryKeyHash()(by_cpu_dso.Entry(added, b_, b_)));

  // A class is the sort keys' per-sample fields plus the interned stack.
  const SampleClassKey c = by_cpu_dso.Class(added);
  EXPECT_EQ(c.cpu, 1u);
  EXPECT_EQ(c.pid, FlatEntry::kAny);
  EXPECT_EQ(c.frames_begin, added.frames_begin);
  EXPECT_EQ(c.frames_count, 3u);
  ProfileSample other_stack = added;
  other_stack.frames_count = 2;
  EXPECT_NE(c, by_cpu_dso.Class(other_stack));
  ProfileSample other_tid = added;
  other_tid.tid = 9;  // tid is not a sort key
  EXPECT_EQ(c, by_cpu_dso.Class(other_tid));
  EXPECT_EQ(SampleClassKeyHash()(c), SampleClassKeyHash()(by_cpu_dso.Class(other_tid)));
}

// -d: rows by the mapping holding each sample's data address (dso_daddr)
// and by the address itself (symbol_daddr, one row per address as perf's).
TEST_F(FlatProfileTest, DataKeysGroupByDataObjectAndAddress) {
  profile_.set_dso_names({"[unknown]", "[kernel.kallsyms]", "/bin/app", "//anon", "/data/f"});
  std::vector<DataLocation> locations(4);
  locations[1] = {0x7000, 3, 0, 0, false};     // anon
  locations[2] = {0x7008, 3, 0, 0, false};     // anon, another address
  locations[3] = {0x9000, 4, 1, 0x10, false};  // in "table" of /data/f
  profile_.set_data_locations(locations, {"", "table"});
  for (auto [data, period] : {std::pair{1u, 10u}, {2u, 20u}, {3u, 40u}, {0u, 5u}}) {
    ProfileSample s;
    s.data = data;
    Add({a_, main_}, period, 0, s);
  }
  Add({b_, main_}, 1, 0, ProfileSample{.data = 3});

  FlatOptions options;
  options.sort_keys = {SortKey::kDsoDaddr, SortKey::kSym};
  const auto by_object = BuildFlatProfile(profile_, options).entries;
  ASSERT_EQ(by_object.size(), 4u);
  EXPECT_EQ(profile_.dso_name(by_object[0].data_dso), "/data/f");
  EXPECT_EQ(by_object[0].function, a_);
  EXPECT_EQ(by_object[0].self_period, 40u);
  EXPECT_EQ(profile_.dso_name(by_object[1].data_dso), "//anon");
  EXPECT_EQ(by_object[1].self_period, 30u);
  EXPECT_EQ(by_object[1].data, FlatEntry::kAny);
  EXPECT_EQ(profile_.dso_name(by_object[2].data_dso), "[unknown]");  // no data address
  EXPECT_EQ(by_object[3].function, b_);

  options.sort_keys = {SortKey::kSymbolDaddr};
  const auto by_address = BuildFlatProfile(profile_, options).entries;
  ASSERT_EQ(by_address.size(), 4u);
  EXPECT_EQ(by_address[0].data, 3u);
  EXPECT_EQ(by_address[0].self_period, 41u);
  EXPECT_EQ(DataSymbolLabel(profile_, by_address[0].data), "[.] table+0x10");
  EXPECT_EQ(by_address[1].data, 2u);
  EXPECT_EQ(DataSymbolLabel(profile_, by_address[1].data), "[.] 0x0000000000007008");
  EXPECT_EQ(by_address[2].data, 1u);
}

// One address in two mappings (unmapped and mapped again): two rows, in an
// order that does not depend on the order of the samples.
TEST(FlatProfileDataTest, RowsAtOneAddressSortTheSameWhateverTheSampleOrder) {
  std::vector<std::vector<uint32_t>> orders;
  for (bool reversed : {false, true}) {
    Profile profile;
    profile.set_event_names({"page-faults"});
    profile.set_dso_names({"[unknown]", "[kernel.kallsyms]", "//anon", "/f"});
    std::vector<DataLocation> locations(3);
    locations[1] = {0x7000, 2, 0, 0, false};
    locations[2] = {0x7000, 3, 0, 0, false};
    profile.set_data_locations(locations, {""});
    const uint32_t f = profile.InternFunction(2, "f", false, true);
    std::vector<std::pair<uint32_t, uint32_t>> samples = {{1, 1}, {2, 2}, {2, 1}, {1, 2}};
    if (reversed) std::reverse(samples.begin(), samples.end());
    for (auto [pid, data] : samples) {
      ProfileSample s{.pid = pid, .data = data, .period = 1};
      profile.AddSample(s, std::vector<uint32_t>{f});
    }
    FlatOptions options;
    options.sort_keys = {SortKey::kPid, SortKey::kSymbolDaddr};
    std::vector<uint32_t> order;
    for (const FlatEntry& e : BuildFlatProfile(profile, options).entries) {
      order.push_back(e.pid * 10 + e.data);
    }
    orders.push_back(order);
  }
  EXPECT_EQ(orders[0], orders[1]);
  EXPECT_EQ(orders[0], (std::vector<uint32_t>{11, 12, 21, 22}));
}

}  // namespace
}  // namespace sample

namespace sample {
namespace {

TEST(FlatProfileFramesTest, WholeChainsOfKeptSamplesCountedInlinedCallsNot) {
  Profile profile;
  profile.set_event_names({"cpu-clock"});
  const uint32_t main = profile.InternFunction(2, "main", false, true);
  const uint32_t inl = profile.InternFunction(2, "helper", false, true, /*inlined=*/true);
  const uint32_t unknown = profile.InternFunction(2, "[unknown] 0x10", false, false);
  const uint32_t comm = profile.InternComm("prog");
  ProfileSample s;
  s.comm = comm;
  s.period = 1;
  s.cpu = 0;
  profile.AddSample(s, std::vector<uint32_t>{inl, main, unknown});  // 2 frames, 1 unknown
  profile.AddSample(s, std::vector<uint32_t>{inl, main, unknown});
  s.cpu = 1;
  profile.AddSample(s, std::vector<uint32_t>{unknown});

  FlatOptions options;
  options.max_stack = 1;  // cuts what entries show, not what is counted
  FlatProfile flat = BuildFlatProfile(profile, options);
  EXPECT_EQ(flat.frames, 5u);
  EXPECT_EQ(flat.unknown_frames, 3u);

  SampleFilterOptions cpu0;
  cpu0.cpus = {0};
  const SampleFilter filter(cpu0);
  options.filter = &filter;
  flat = BuildFlatProfile(profile, options);
  EXPECT_EQ(flat.frames, 4u);
  EXPECT_EQ(flat.unknown_frames, 2u);
}

}  // namespace
}  // namespace sample
