#include "libsample/model/process_table.h"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sample {
namespace {

struct MapView {
  uint64_t start;
  uint64_t end;
  uint64_t pgoff;
  std::string path;
  bool operator==(const MapView&) const = default;
};

std::ostream& operator<<(std::ostream& os, const MapView& m) {
  return os << std::hex << "[0x" << m.start << ", 0x" << m.end << ") pgoff 0x" << m.pgoff << " "
            << m.path;
}

// The mapping containing `addr`, as plain values, or nullopt.
std::optional<MapView> Lookup(const ProcessTable& table, uint32_t pid, uint64_t addr) {
  const Mapping* m = table.FindMapping(pid, addr);
  if (m == nullptr) return std::nullopt;
  EXPECT_LE(m->start, addr);
  EXPECT_LT(addr, m->end);
  return MapView{m->start, m->end, m->pgoff, table.DsoPath(m->dso)};
}

// Every mapping of `pid` in [from, to), in address order, found by probing
// every 0x100 bytes (all mappings in these tests are 0x100-aligned).
std::vector<MapView> MapsOf(const ProcessTable& table, uint32_t pid, uint64_t from, uint64_t to) {
  std::vector<MapView> maps;
  for (uint64_t addr = from; addr < to; addr += 0x100) {
    auto m = Lookup(table, pid, addr);
    if (m && (maps.empty() || !(maps.back() == *m))) maps.push_back(*m);
  }
  return maps;
}

TEST(ProcessTableTest, FindMappingBoundaries) {
  ProcessTable table;
  table.ApplyMmap(10, 0x400000, 0x2000, 0x1000, "/bin/app");
  EXPECT_EQ(Lookup(table, 10, 0x400000), (MapView{0x400000, 0x402000, 0x1000, "/bin/app"}));
  EXPECT_TRUE(Lookup(table, 10, 0x401fff).has_value());
  EXPECT_FALSE(Lookup(table, 10, 0x402000).has_value());  // end is exclusive
  EXPECT_FALSE(Lookup(table, 10, 0x3fffff).has_value());
  EXPECT_FALSE(Lookup(table, 10, 0).has_value());
  EXPECT_FALSE(Lookup(table, 10, ~uint64_t{0}).has_value());
  EXPECT_FALSE(Lookup(table, 11, 0x400000).has_value());  // another process
}

TEST(ProcessTableTest, AdjacentMappingsStayApart) {
  ProcessTable table;
  table.ApplyMmap(1, 0x1000, 0x1000, 0, "/a");
  table.ApplyMmap(1, 0x2000, 0x1000, 0, "/b");
  table.ApplyMmap(1, 0x0, 0x1000, 0, "/c");
  EXPECT_EQ(MapsOf(table, 1, 0, 0x4000),
            (std::vector<MapView>{
                {0x0, 0x1000, 0, "/c"}, {0x1000, 0x2000, 0, "/a"}, {0x2000, 0x3000, 0, "/b"}}));
}

TEST(ProcessTableTest, MappingInsideAnotherSplitsIt) {
  ProcessTable table;
  table.ApplyMmap(1, 0x10000, 0x8000, 0x4000, "/lib/big.so");
  table.ApplyMmap(1, 0x12000, 0x1000, 0, "[anon]");
  EXPECT_EQ(MapsOf(table, 1, 0x10000, 0x18000),
            (std::vector<MapView>{{0x10000, 0x12000, 0x4000, "/lib/big.so"},
                                  {0x12000, 0x13000, 0, "[anon]"},
                                  // the right part keeps mapping the same file bytes
                                  {0x13000, 0x18000, 0x7000, "/lib/big.so"}}));
}

TEST(ProcessTableTest, MappingOverSeveralReplacesAndTrims) {
  ProcessTable table;
  table.ApplyMmap(1, 0x1000, 0x1000, 0x100000, "/a");
  table.ApplyMmap(1, 0x2000, 0x1000, 0x200000, "/b");
  table.ApplyMmap(1, 0x3000, 0x1000, 0x300000, "/c");
  table.ApplyMmap(1, 0x5000, 0x1000, 0x500000, "/e");
  table.ApplyMmap(1, 0x1800, 0x2000, 0x42000, "/d");
  EXPECT_EQ(MapsOf(table, 1, 0, 0x7000), (std::vector<MapView>{{0x1000, 0x1800, 0x100000, "/a"},
                                                               {0x1800, 0x3800, 0x42000, "/d"},
                                                               {0x3800, 0x4000, 0x300800, "/c"},
                                                               {0x5000, 0x6000, 0x500000, "/e"}}));
}

TEST(ProcessTableTest, MappingOverlappingTheStartOfAnother) {
  ProcessTable table;
  table.ApplyMmap(1, 0x2000, 0x2000, 0x10000, "/old");
  table.ApplyMmap(1, 0x1000, 0x2000, 0, "/new");
  EXPECT_EQ(MapsOf(table, 1, 0, 0x5000),
            (std::vector<MapView>{{0x1000, 0x3000, 0, "/new"}, {0x3000, 0x4000, 0x11000, "/old"}}));
}

TEST(ProcessTableTest, SameRangeIsReplaced) {
  ProcessTable table;
  table.ApplyMmap(1, 0x1000, 0x1000, 0, "/first");
  table.ApplyMmap(1, 0x1000, 0x1000, 0x3000, "/second");
  EXPECT_EQ(MapsOf(table, 1, 0, 0x3000),
            (std::vector<MapView>{{0x1000, 0x2000, 0x3000, "/second"}}));
}

TEST(ProcessTableTest, EmptyAndWrappingMappingsAreIgnored) {
  ProcessTable table;
  table.ApplyMmap(1, 0x1000, 0x1000, 0, "/a");
  table.ApplyMmap(1, 0x1000, 0, 0, "/empty");
  table.ApplyMmap(1, 0xfffffffffffff000, 0x2000, 0, "/wraps");
  EXPECT_EQ(MapsOf(table, 1, 0, 0x3000), (std::vector<MapView>{{0x1000, 0x2000, 0, "/a"}}));
  EXPECT_FALSE(Lookup(table, 1, 0xfffffffffffff800).has_value());
  // Near the top of the address space, but not wrapping: kept.
  table.ApplyMmap(1, 0xffffffffff600000, 0x1000, 0, "[vsyscall]");
  EXPECT_EQ(Lookup(table, 1, 0xffffffffff600000),
            (MapView{0xffffffffff600000, 0xffffffffff601000, 0, "[vsyscall]"}));
}

TEST(ProcessTableTest, ForkCopiesParentMapsAndComm) {
  ProcessTable table;
  table.ApplyComm(100, 100, "parent", false);
  table.ApplyMmap(100, 0x400000, 0x1000, 0, "/bin/parent");
  table.ApplyFork(200, 100, 200, 100);
  EXPECT_EQ(table.CommOf(200, 200), "parent");
  EXPECT_EQ(Lookup(table, 200, 0x400000), (MapView{0x400000, 0x401000, 0, "/bin/parent"}));

  // After the fork the address spaces are separate.
  table.ApplyMmap(200, 0x500000, 0x1000, 0, "/child-only");
  table.ApplyMmap(100, 0x600000, 0x1000, 0, "/parent-only");
  EXPECT_FALSE(Lookup(table, 100, 0x500000).has_value());
  EXPECT_FALSE(Lookup(table, 200, 0x600000).has_value());
  table.ApplyComm(200, 200, "child", false);
  EXPECT_EQ(table.CommOf(200, 200), "child");
  EXPECT_EQ(table.CommOf(100, 100), "parent");
}

TEST(ProcessTableTest, ForkOfAThreadTakesThatThreadsComm) {
  ProcessTable table;
  table.ApplyComm(100, 100, "main", false);
  table.ApplyFork(100, 100, 101, 100);
  table.ApplyComm(100, 101, "worker", false);
  table.ApplyFork(300, 100, 300, 101);  // the worker thread forks
  EXPECT_EQ(table.CommOf(300, 300), "worker");
}

TEST(ProcessTableTest, ThreadsShareTheProcessMaps) {
  ProcessTable table;
  table.ApplyComm(100, 100, "server", false);
  table.ApplyMmap(100, 0x400000, 0x1000, 0, "/bin/server");
  table.ApplyFork(100, 100, 101, 100);  // a thread: pid == ppid
  EXPECT_EQ(table.CommOf(100, 101), "server");
  EXPECT_EQ(table.CommOf(100, 100), "server");
  // A mapping created by any thread is visible to all of them.
  table.ApplyMmap(100, 0x7f0000000000, 0x1000, 0, "/lib/libc.so.6");
  EXPECT_TRUE(Lookup(table, 100, 0x400000).has_value());
  EXPECT_TRUE(Lookup(table, 100, 0x7f0000000000).has_value());
  // A thread renaming itself does not rename the process.
  table.ApplyComm(100, 101, "io-worker", false);
  EXPECT_EQ(table.CommOf(100, 101), "io-worker");
  EXPECT_EQ(table.CommOf(100, 100), "server");
  // A thread we never saw created falls back to the process name.
  EXPECT_EQ(table.CommOf(100, 105), "server");
}

TEST(ProcessTableTest, ExecClearsMapsButPlainCommDoesNot) {
  ProcessTable table;
  table.ApplyComm(100, 100, "sh", false);
  table.ApplyMmap(100, 0x400000, 0x1000, 0, "/bin/sh");
  table.ApplyComm(100, 100, "renamed", false);
  EXPECT_TRUE(Lookup(table, 100, 0x400000).has_value());
  EXPECT_EQ(table.CommOf(100, 100), "renamed");

  table.ApplyComm(100, 100, "ls", true);
  EXPECT_FALSE(Lookup(table, 100, 0x400000).has_value());
  EXPECT_EQ(table.CommOf(100, 100), "ls");
  table.ApplyMmap(100, 0x400000, 0x2000, 0, "/bin/ls");
  EXPECT_EQ(Lookup(table, 100, 0x401000), (MapView{0x400000, 0x402000, 0, "/bin/ls"}));
}

TEST(ProcessTableTest, ExecInAChildDoesNotTouchTheParent) {
  ProcessTable table;
  table.ApplyComm(1, 1, "shell", false);
  table.ApplyMmap(1, 0x400000, 0x1000, 0, "/bin/sh");
  table.ApplyFork(2, 1, 2, 1);
  table.ApplyComm(2, 2, "cat", true);
  EXPECT_TRUE(Lookup(table, 1, 0x400000).has_value());
  EXPECT_FALSE(Lookup(table, 2, 0x400000).has_value());
  EXPECT_EQ(table.CommOf(1, 1), "shell");
  EXPECT_EQ(table.CommOf(2, 2), "cat");
}

TEST(ProcessTableTest, CommOfFallsBackToColonTid) {
  ProcessTable table;
  EXPECT_EQ(table.CommOf(42, 43), ":43");
  EXPECT_EQ(table.CommOf(7, 7), ":7");
  // A process known only by its maps has no name either.
  table.ApplyMmap(9, 0x1000, 0x1000, 0, "/x");
  EXPECT_EQ(table.CommOf(9, 9), ":9");
  table.ApplyComm(9, 9, "nine", false);
  EXPECT_EQ(table.CommOf(9, 9), "nine");
  EXPECT_EQ(table.CommOf(9, 10), "nine");
}

TEST(ProcessTableTest, ExitKeepsNamesAndMapsForLateSamples) {
  ProcessTable table;
  table.ApplyComm(5, 5, "short-lived", false);
  table.ApplyMmap(5, 0x1000, 0x1000, 0, "/bin/short");
  table.ApplyExit(5, 5);
  EXPECT_EQ(table.CommOf(5, 5), "short-lived");
  EXPECT_TRUE(Lookup(table, 5, 0x1000).has_value());
}

TEST(ProcessTableTest, ReusedPidIsResetByItsFork) {
  ProcessTable table;
  table.ApplyComm(1, 1, "init", false);
  table.ApplyComm(300, 300, "old", false);
  table.ApplyMmap(300, 0x1000, 0x1000, 0, "/bin/old");
  table.ApplyExit(300, 300);
  table.ApplyFork(300, 1, 300, 1);  // pid 300 reused by a child of init
  EXPECT_FALSE(Lookup(table, 300, 0x1000).has_value());
  EXPECT_EQ(table.CommOf(300, 300), "init");
}

// The same, with a parent the table knows nothing about (it existed before
// recording and was never described): the dead process's name must not be
// given to the new one.
TEST(ProcessTableTest, ReusedPidWithUnknownParentForgetsTheOldName) {
  ProcessTable table;
  table.ApplyComm(300, 300, "old", false);
  table.ApplyMmap(300, 0x1000, 0x1000, 0, "/bin/old");
  table.ApplyExit(300, 300);
  table.ApplyFork(300, 77, 300, 77);
  EXPECT_FALSE(Lookup(table, 300, 0x1000).has_value());
  EXPECT_EQ(std::string(table.CommOf(300, 300)), ":300");
}

TEST(ProcessTableTest, DsosAreInternedOnce) {
  ProcessTable table;
  EXPECT_EQ(table.DsoPath(ProcessTable::kUnknownDso), "[unknown]");
  EXPECT_EQ(table.DsoPath(ProcessTable::kKernelDso), "[kernel.kallsyms]");
  const size_t before = table.dso_count();
  table.ApplyMmap(1, 0x1000, 0x1000, 0, "/lib/libc.so.6");
  table.ApplyMmap(2, 0x5000, 0x1000, 0, "/lib/libc.so.6");
  EXPECT_EQ(table.dso_count(), before + 1);
  EXPECT_EQ(table.FindMapping(1, 0x1000)->dso, table.FindMapping(2, 0x5000)->dso);
  EXPECT_EQ(table.InternDso("/lib/libc.so.6"), table.FindMapping(1, 0x1000)->dso);
  EXPECT_NE(table.InternDso("/lib/libm.so.6"), table.FindMapping(1, 0x1000)->dso);
  EXPECT_EQ(table.dso_count(), before + 2);
}

TEST(ProcessTableTest, KernelAddresses) {
  EXPECT_TRUE(IsKernelAddress(0xffffffff81000000));
  EXPECT_TRUE(IsKernelAddress(0x8000000000000000));
  EXPECT_FALSE(IsKernelAddress(0x7fffffffffffffff));
  EXPECT_FALSE(IsKernelAddress(0x400000));
}

// What is derived from mappings is kept with their version: every change
// gives a number no process had before, and nothing else changes it.
TEST(ProcessTableTest, MappingsVersionMovesOnEveryMappingChangeOnly) {
  ProcessTable table;
  EXPECT_EQ(table.MappingsVersion(7), 0u);
  table.ApplyComm(7, 7, "a", false);
  const uint64_t created = table.MappingsVersion(7);
  EXPECT_NE(created, 0u);
  table.ApplyComm(7, 8, "b", false);  // a thread's name: mappings unchanged
  table.ApplyExit(7, 8);
  EXPECT_EQ(table.MappingsVersion(7), created);
  table.ApplyMmap(7, 0x1000, 0x1000, 0, "/bin/a");
  const uint64_t mapped = table.MappingsVersion(7);
  EXPECT_GT(mapped, created);
  table.ApplyComm(7, 7, "c", true);  // exec
  const uint64_t execed = table.MappingsVersion(7);
  EXPECT_GT(execed, mapped);
  table.ApplyFork(9, 7, 9, 7);  // a child: a copy, but a version of its own
  EXPECT_GT(table.MappingsVersion(9), execed);
  table.ApplyFork(7, 7, 10, 7);  // a thread: same process
  EXPECT_EQ(table.MappingsVersion(7), execed);
}

// JIT code from a jitdump is a layer of its own: a load over the
// anonymous mapping leaves the mapping whole, a later load over part of
// an earlier one replaces that part, a move's removal leaves nothing, exec
// clears the layer, and every change moves the mappings version.
TEST(ProcessTableTest, JitCodeIsALayerOverTheMappings) {
  ProcessTable table;
  table.ApplyMmap(7, 0x10000, 0x10000, 0, "//anon");
  const uint32_t dso = table.InternDso("[jitted-7]");
  uint64_t version = table.MappingsVersion(7);
  table.ApplyJitCode(7, 0x11000, 0x100, dso, 0x40);
  EXPECT_GT(table.MappingsVersion(7), version);
  ASSERT_NE(table.FindMapping(7, 0x11010), nullptr);
  EXPECT_EQ(table.FindMapping(7, 0x11010)->end, 0x20000u);  // the mapping stays whole
  const Mapping* f = table.FindJitCode(7, 0x11010);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->dso, dso);
  EXPECT_EQ(0x11010 - f->start + f->pgoff, 0x50u);
  table.ApplyJitCode(7, 0x11080, 0x100, dso, 0x200);  // over f's second half
  EXPECT_EQ(table.FindJitCode(7, 0x11010)->pgoff, 0x40u);
  EXPECT_EQ(table.FindJitCode(7, 0x110f0)->pgoff, 0x200u);
  version = table.MappingsVersion(7);
  table.RemoveJitCode(7, 0x11000, 0x80);  // f moved away
  EXPECT_GT(table.MappingsVersion(7), version);
  EXPECT_EQ(table.FindJitCode(7, 0x11010), nullptr);
  EXPECT_NE(table.FindJitCode(7, 0x11090), nullptr);
  EXPECT_EQ(table.FindJitCode(8, 0x11090), nullptr);  // another process has none
  table.ApplyComm(7, 7, "new", true);                 // exec: the JIT is gone
  EXPECT_EQ(table.FindJitCode(7, 0x11090), nullptr);
}

// -d's mappings of data: a layer code is never looked up in, found before
// the code mappings by FindDataMapping, dropped by an exec and by a code
// mapping over them, copied by a fork; MappingsVersion does not move.
TEST(ProcessTableTest, DataMappingsAreALayerOfTheirOwn) {
  ProcessTable table;
  table.ApplyMmap(5, 0x400000, 0x2000, 0, "/bin/app");
  const uint64_t version = table.MappingsVersion(5);
  table.ApplyDataMmap(5, 0x600000, 0x3000, 0, "//anon");
  table.ApplyDataMmap(5, 0x700000, 0x1000, 0x2000, "/data/file");
  EXPECT_EQ(table.MappingsVersion(5), version);
  EXPECT_EQ(table.FindMapping(5, 0x600000), nullptr);  // not code
  const Mapping* anon = table.FindDataMapping(5, 0x602fff);
  ASSERT_NE(anon, nullptr);
  EXPECT_EQ(table.DsoPath(anon->dso), "//anon");
  const Mapping* file = table.FindDataMapping(5, 0x700010);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->pgoff, 0x2000u);
  EXPECT_EQ(table.DsoPath(file->dso), "/data/file");
  // A constant in the binary's code mapping.
  const Mapping* code = table.FindDataMapping(5, 0x401000);
  ASSERT_NE(code, nullptr);
  EXPECT_EQ(table.DsoPath(code->dso), "/bin/app");
  EXPECT_EQ(table.FindDataMapping(5, 0x603000), nullptr);
  EXPECT_EQ(table.FindDataMapping(6, 0x600000), nullptr);

  // A data mapping over part of another splits it.
  table.ApplyDataMmap(5, 0x601000, 0x1000, 0, "/other");
  EXPECT_EQ(table.DsoPath(table.FindDataMapping(5, 0x600000)->dso), "//anon");
  EXPECT_EQ(table.DsoPath(table.FindDataMapping(5, 0x601000)->dso), "/other");
  EXPECT_EQ(table.DsoPath(table.FindDataMapping(5, 0x602000)->dso), "//anon");
  // Code mapped over data replaces it.
  table.ApplyMmap(5, 0x602000, 0x1000, 0, "/lib/jit.so");
  EXPECT_EQ(table.DsoPath(table.FindDataMapping(5, 0x602000)->dso), "/lib/jit.so");

  table.ApplyFork(9, 5, 9, 5);
  EXPECT_NE(table.FindDataMapping(9, 0x700000), nullptr);
  table.ApplyComm(5, 5, "app", /*exec=*/true);
  EXPECT_EQ(table.FindDataMapping(5, 0x700000), nullptr);
  EXPECT_NE(table.FindDataMapping(9, 0x700000), nullptr);
}

}  // namespace
}  // namespace sample
