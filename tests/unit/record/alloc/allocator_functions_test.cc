#include "record/alloc/allocator_functions.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sample::record {
namespace {

using ::testing::HasSubstr;

const FoundAllocFunction* Find(const std::vector<FoundAllocFunction>& found,
                               std::string_view symbol) {
  auto it = std::find_if(found.begin(), found.end(),
                         [&](const FoundAllocFunction& f) { return f.function->symbol == symbol; });
  return it == found.end() ? nullptr : &*it;
}

TEST(AllocatorFunctionsTest, AProgramWithoutMallocIsRefusedNamingWhereItLooked) {
  // /bin/true imports what it calls from libc and defines no allocator.
  const auto found = FindAllocFunctions({"/bin/true"});
  ASSERT_FALSE(found);
  EXPECT_THAT(found.error().message, HasSubstr("defines malloc (looked in: /bin/true)"));
}

TEST(AllocatorFunctionsTest, ACommandsCLibraryDefinesMallocAndFree) {
  const auto binaries = CommandBinaries("true");  // found on PATH, as execvp does
  ASSERT_TRUE(binaries) << binaries.error().message;
  ASSERT_GE(binaries->size(), 2u);
  const auto found = FindAllocFunctions(*binaries);
  ASSERT_TRUE(found) << found.error().message;
  const FoundAllocFunction* malloc = Find(*found, "malloc");
  const FoundAllocFunction* free = Find(*found, "free");
  ASSERT_TRUE(malloc && free);
  EXPECT_THAT(malloc->path, HasSubstr("libc.so"));
  EXPECT_EQ(malloc->path, free->path);
  // Each probe a pair of an entry and, for what returns a pointer, a
  // return probe at the same place; free's moved past what the kernel
  // would single-step, never before the function.
  const std::vector<UprobeDefinition> defs = AllocProbeDefinitions(*found);
  const auto def = [&](std::string_view event) {
    return std::find_if(defs.begin(), defs.end(),
                        [&](const UprobeDefinition& d) { return d.event == event; });
  };
  ASSERT_NE(def("malloc"), defs.end());
  ASSERT_NE(def("malloc_return"), defs.end());
  EXPECT_TRUE(def("malloc_return")->retprobe);
  EXPECT_EQ(def("malloc")->file_offset, malloc->file_offset);
  EXPECT_EQ(def("malloc_return")->fetch_args, "ptr=$retval:x64");
  ASSERT_NE(def("free"), defs.end());
  EXPECT_EQ(def("free_return"), defs.end());
  EXPECT_GE(def("free")->file_offset, free->file_offset);
  EXPECT_LE(def("free")->file_offset, free->file_offset + 13);
}

TEST(AllocatorFunctionsTest, AnUnknownCommandIsNamed) {
  const auto binaries = CommandBinaries("no-such-command-here");
  ASSERT_FALSE(binaries);
  EXPECT_THAT(binaries.error().message, HasSubstr("cannot find 'no-such-command-here' on PATH"));
}

}  // namespace
}  // namespace sample::record
