// DataAddresses: a sample's data address placed in the mapping that held
// it and named by the variable of the mapped file holding it, on this test
// binary's own global and anonymous memory.
#include "report/load/data_addresses.h"

#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace sample::report {
namespace {

// Initialized: in the file-backed data segment, with a symbol of its own.
int data_address_probe[1024] = {1};

// This process's mapping holding `addr`, from /proc/self/maps, applied to
// `table` as a mapping of data of process 1.
bool MapFromProc(ProcessTable& table, uint64_t addr) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms, offset, device, inode, path;
    in >> range >> perms >> offset >> device >> inode;
    // The path is the rest of the line: it may hold spaces (a checkout in
    // "my dir").
    std::getline(in >> std::ws, path);
    const uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    const uint64_t end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    if (addr < start || addr >= end) continue;
    table.ApplyDataMmap(1, start, end - start, std::stoull(offset, nullptr, 16),
                        path.empty() ? "//anon" : path);
    return true;
  }
  return false;
}

TEST(DataAddressesTest, PlacedInMappingsAndNamedByVariables) {
  ProcessTable table;
  const auto variable = reinterpret_cast<uint64_t>(&data_address_probe[100]);
  ASSERT_TRUE(MapFromProc(table, variable));
  void* anon = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  const auto anon_address = reinterpret_cast<uint64_t>(anon) + 16;
  table.ApplyDataMmap(1, reinterpret_cast<uint64_t>(anon), 4096, 0, "//anon");
  munmap(anon, 4096);

  DataAddresses data;
  const uint32_t in_variable = data.Locate(table, 1, variable);
  const uint32_t in_anon = data.Locate(table, 1, anon_address);
  const uint32_t nowhere = data.Locate(table, 1, 0x1000);
  const uint32_t kernel = data.Locate(table, 1, 0xffffffff81000000);
  EXPECT_EQ(data.Locate(table, 1, variable), in_variable);  // interned
  EXPECT_NE(in_variable, 0u);
  EXPECT_EQ(data.size(), 4u);

  Profile profile;
  data.Resolve(table, BinaryLocatorOptions{}, RecordedCode{}, {}, profile);
  std::vector<std::string> names;
  for (size_t i = 0; i < table.dso_count(); ++i) {
    names.push_back(table.DsoPath(static_cast<uint32_t>(i)));
  }
  profile.set_dso_names(names);
  ASSERT_TRUE(profile.has_data_locations());
  const DataLocation& v = profile.data_location(in_variable);
  EXPECT_EQ(v.address, variable);
  EXPECT_EQ(profile.data_symbol(v.symbol), "sample::report::(anonymous namespace)::data_address_probe");
  EXPECT_EQ(v.symbol_offset, 400u);
  EXPECT_FALSE(v.function);
  EXPECT_EQ(DataSymbolLabel(profile, in_variable),
            "[.] sample::report::(anonymous namespace)::data_address_probe+0x190");
  EXPECT_EQ(profile.dso_name(profile.data_location(in_anon).dso), "//anon");
  EXPECT_EQ(profile.data_location(in_anon).symbol, 0u);
  EXPECT_EQ(profile.data_location(nowhere).dso, ProcessTable::kUnknownDso);
  EXPECT_EQ(DataSymbolLabel(profile, nowhere), "[.] 0x0000000000001000");
  EXPECT_EQ(profile.data_location(kernel).dso, ProcessTable::kKernelDso);
  EXPECT_EQ(DataSymbolLabel(profile, kernel), "[k] 0xffffffff81000000");
}

}  // namespace
}  // namespace sample::report
