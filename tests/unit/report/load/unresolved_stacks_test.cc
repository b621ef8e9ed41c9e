// UnresolvedStacks: call chains resolved against the process table of
// their moment, numbered once, cached until the process's mappings change.
#include "report/load/unresolved_stacks.h"

#include <gtest/gtest.h>

#include <vector>

namespace sample::report {
namespace {

// A call chain as the kernel writes it (the words, markers included).
struct Chain {
  explicit Chain(std::vector<uint64_t> words) : words_(std::move(words)) {}
  U64List list() const {
    return U64List(reinterpret_cast<const std::byte*>(words_.data()), words_.size());
  }
  std::vector<uint64_t> words_;
};

constexpr uint64_t kUser = static_cast<uint64_t>(PERF_CONTEXT_USER);
constexpr uint64_t kKernel = static_cast<uint64_t>(PERF_CONTEXT_KERNEL);

class UnresolvedStacksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    processes_.ApplyComm(10, 10, "app", /*exec=*/true);
    // /bin/app: file offset 0x1000 mapped at 0x400000.
    processes_.ApplyMmap(10, 0x400000, 0x10000, 0x1000, "/bin/app");
  }
  const Location& LocationOf(UnresolvedStacks::StackRef stack, size_t frame) {
    return stacks_.locations()[stacks_.frame(stacks_.Frames(stack)[frame]).location];
  }
  ProcessTable processes_;
  UnresolvedStacks stacks_;
};

TEST_F(UnresolvedStacksTest, ChainsResolveToDsoOffsetsAndCallersAtTheCall) {
  const Chain chain({kKernel, 0xffffffff81000010ull, kUser, 0x400100, 0x400200});
  const auto stack = stacks_.StackOf(processes_, 10, 0, chain.list());
  ASSERT_EQ(stack.count, 3u);
  // The first address after each marker is exact; the rest are return
  // addresses, looked up one byte earlier (at the call).
  EXPECT_EQ(LocationOf(stack, 0).dso, ProcessTable::kKernelDso);
  EXPECT_EQ(LocationOf(stack, 0).offset, 0xffffffff81000010ull);
  EXPECT_EQ(processes_.DsoPath(LocationOf(stack, 1).dso), "/bin/app");
  EXPECT_EQ(LocationOf(stack, 1).offset, 0x1100u);
  EXPECT_EQ(LocationOf(stack, 2).offset, 0x11ffu);
  EXPECT_FALSE(stacks_.frame(stacks_.Frames(stack)[1]).return_address);
  EXPECT_TRUE(stacks_.frame(stacks_.Frames(stack)[2]).return_address);
  EXPECT_EQ(stacks_.frame(stacks_.Frames(stack)[2]).ip, 0x400200u);
}

TEST_F(UnresolvedStacksTest, EmptyChainIsTheIpAloneAndUnmappedIsUnknown) {
  const auto stack = stacks_.StackOf(processes_, 10, 0x400300, U64List());
  ASSERT_EQ(stack.count, 1u);
  EXPECT_EQ(LocationOf(stack, 0).offset, 0x1300u);
  const auto nowhere = stacks_.StackOf(processes_, 10, 0x900000, U64List());
  EXPECT_EQ(LocationOf(nowhere, 0).dso, ProcessTable::kUnknownDso);
  EXPECT_EQ(LocationOf(nowhere, 0).offset, 0x900000u);
}

TEST_F(UnresolvedStacksTest, SameChainSameStackAndLocationsNumberedOnce) {
  const Chain a({kUser, 0x400100, 0x400200});
  const Chain b({kUser, 0x400100, 0x400300});
  const auto first = stacks_.StackOf(processes_, 10, 0, a.list());
  const auto again = stacks_.StackOf(processes_, 10, 0, a.list());
  EXPECT_EQ(first.begin, again.begin);
  EXPECT_EQ(first.count, again.count);
  stacks_.StackOf(processes_, 10, 0, b.list());
  EXPECT_EQ(stacks_.locations().size(), 3u);  // 0x1100, 0x11ff, 0x12ff
}

// After an mmap over the same addresses the cached chain must not answer:
// the same ips are in another file now.
TEST_F(UnresolvedStacksTest, CachedChainsFollowMappingChanges) {
  const Chain chain({kUser, 0x400100});
  const auto before = stacks_.StackOf(processes_, 10, 0, chain.list());
  processes_.ApplyMmap(10, 0x400000, 0x10000, 0, "/bin/other");
  const auto after = stacks_.StackOf(processes_, 10, 0, chain.list());
  EXPECT_EQ(processes_.DsoPath(LocationOf(before, 0).dso), "/bin/app");
  EXPECT_EQ(processes_.DsoPath(LocationOf(after, 0).dso), "/bin/other");
  EXPECT_EQ(LocationOf(after, 0).offset, 0x100u);
  // An exec empties the address space: unknown now.
  processes_.ApplyComm(10, 10, "app2", /*exec=*/true);
  const auto exec = stacks_.StackOf(processes_, 10, 0, chain.list());
  EXPECT_EQ(LocationOf(exec, 0).dso, ProcessTable::kUnknownDso);
}

// A lone ip (--annotate's leaf-only load) is cached apart from chains, by
// process and mappings version: the same ip in another process, or after
// an mmap, resolves anew.
TEST_F(UnresolvedStacksTest, CachedLoneIpsFollowProcessesAndMappingChanges) {
  processes_.ApplyComm(11, 11, "other", /*exec=*/true);
  processes_.ApplyMmap(11, 0x400000, 0x10000, 0x2000, "/bin/other");
  const auto first = stacks_.StackOf(processes_, 10, 0x400100, U64List());
  const auto again = stacks_.StackOf(processes_, 10, 0x400100, U64List());
  EXPECT_EQ(first.begin, again.begin);
  const auto other = stacks_.StackOf(processes_, 11, 0x400100, U64List());
  EXPECT_EQ(processes_.DsoPath(LocationOf(other, 0).dso), "/bin/other");
  EXPECT_EQ(LocationOf(other, 0).offset, 0x2100u);
  EXPECT_EQ(
      processes_.DsoPath(LocationOf(stacks_.StackOf(processes_, 10, 0x400100, U64List()), 0).dso),
      "/bin/app");
  processes_.ApplyMmap(10, 0x400000, 0x10000, 0, "/bin/new");
  const auto after = stacks_.StackOf(processes_, 10, 0x400100, U64List());
  EXPECT_EQ(processes_.DsoPath(LocationOf(after, 0).dso), "/bin/new");
  EXPECT_EQ(LocationOf(after, 0).offset, 0x100u);
  // An exec empties the address space; a cleared cache resolves anew.
  processes_.ApplyComm(10, 10, "app2", /*exec=*/true);
  EXPECT_EQ(LocationOf(stacks_.StackOf(processes_, 10, 0x400100, U64List()), 0).dso,
            ProcessTable::kUnknownDso);
  processes_.ApplyMmap(10, 0x400000, 0x10000, 0, "/bin/new");
  stacks_.ClearChainCaches();
  // A chain of the same one address is its own entry, and agrees.
  const Chain chain({kUser, 0x400100});
  EXPECT_EQ(stacks_.StackOf(processes_, 10, 0, chain.list()).begin, after.begin);
  // Many ips, more than the table's slots: each still its own.
  for (uint64_t ip = 0x400000; ip < 0x408000; ip += 2) {
    ASSERT_EQ(LocationOf(stacks_.StackOf(processes_, 10, ip, U64List()), 0).offset, ip - 0x400000);
  }
  for (uint64_t ip = 0x400000; ip < 0x408000; ip += 2) {
    ASSERT_EQ(LocationOf(stacks_.StackOf(processes_, 10, ip, U64List()), 0).offset, ip - 0x400000);
  }
}

// A chain of context markers alone (no address after them) is the ip's
// stack: two such samples at two ips are two stacks, not the first one's.
TEST_F(UnresolvedStacksTest, AChainOfMarkersAloneIsTheIpsStack) {
  const Chain markers({kUser});
  const auto a = stacks_.StackOf(processes_, 10, 0x400100, markers.list());
  const auto b = stacks_.StackOf(processes_, 10, 0x400200, markers.list());
  EXPECT_EQ(LocationOf(a, 0).offset, 0x1100u);
  EXPECT_EQ(LocationOf(b, 0).offset, 0x1200u);
}

TEST_F(UnresolvedStacksTest, AnonymousCodeIsNamedByThePerfMap) {
  processes_.ApplyMmap(10, 0x7f0000000000, 0x1000, 0, "//anon");
  const auto stack = stacks_.StackOf(processes_, 10, 0x7f0000000010, U64List());
  EXPECT_EQ(processes_.DsoPath(LocationOf(stack, 0).dso), "/tmp/perf-10.map");
  EXPECT_EQ(LocationOf(stack, 0).offset, 0x7f0000000010u);  // by address
}

TEST_F(UnresolvedStacksTest, ReleasedIndexesKeepWhatWasBuilt) {
  const Chain chain({kUser, 0x400100, 0x400200});
  const auto stack = stacks_.StackOf(processes_, 10, 0, chain.list());
  stacks_.ReleaseIndexes();
  ASSERT_EQ(stacks_.Frames(stack).size(), 2u);
  EXPECT_EQ(LocationOf(stack, 1).offset, 0x11ffu);
}

// Junk words of a frame-pointer walk (a caller in no code mapping) end the
// chain there: no frame of theirs, and the stack says it was ended.
TEST_F(UnresolvedStacksTest, ACallerInNoCodeMappingEndsTheChain) {
  const Chain junk({kUser, 0x400100, 0x400200, 0x900000, 0x400300});
  const auto a = stacks_.StackOf(processes_, 10, 0, junk.list());
  EXPECT_TRUE(stacks_.last_chain_ended());
  ASSERT_EQ(a.count, 2u);  // the leaf and its one real caller
  EXPECT_EQ(processes_.DsoPath(LocationOf(a, 1).dso), "/bin/app");
  // The same chain again comes from the cache, ended too.
  const auto again = stacks_.StackOf(processes_, 10, 0, junk.list());
  EXPECT_EQ(again.begin, a.begin);
  EXPECT_TRUE(stacks_.last_chain_ended());
  const Chain clean({kUser, 0x400100, 0x400200});
  stacks_.StackOf(processes_, 10, 0, clean.list());
  EXPECT_FALSE(stacks_.last_chain_ended());
}

// An interrupted address in no mapping is the sample's own: kept, and a
// live view makes every such address one location.
TEST_F(UnresolvedStacksTest, ALiveViewCollapsesUnmappedAddressesIntoOne) {
  stacks_.set_collapse_unknown(true);
  const Chain one({kUser, 0x900000, 0x400100});
  const Chain other({kUser, 0x7777777700ull, 0x400100});
  const auto a = stacks_.StackOf(processes_, 10, 0, one.list());
  const auto b = stacks_.StackOf(processes_, 10, 0, other.list());
  ASSERT_EQ(a.count, 2u);
  EXPECT_EQ(LocationOf(a, 0).dso, ProcessTable::kUnknownDso);
  EXPECT_EQ(LocationOf(a, 0).offset, 0u);
  // One location and one frame for them all, so one stack for both chains.
  EXPECT_EQ(a.begin, b.begin);
  EXPECT_FALSE(stacks_.last_chain_ended());
  // Mapped code keeps its own locations.
  EXPECT_EQ(processes_.DsoPath(LocationOf(a, 1).dso), "/bin/app");
}

}  // namespace
}  // namespace sample::report
