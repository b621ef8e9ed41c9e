// CfiRows against libdwfl read as the unwinder reads it, at every address
// of small binaries' code (.eh_frame, .debug_frame in the binary or in a
// separate debug file, a function whose epilogue restores a remembered
// state), and at a stride of libc's: the same rule, and a row range that
// holds the address and has that rule from its first address to its last.
#include "libsample/symbols/cfi_rows.h"

#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "libsample/symbols/elf_symbols.h"
#include "tests/unit/libsample/symbols/embedding_reference.h"

namespace sample {
namespace {

using testing::DwflRules;

bool SameRule(const X86FrameRule& a, const X86FrameRule& b) {
  return CfiRow{0, 0, a} == CfiRow{0, 0, b};
}

// Returns how many addresses had a row.
size_t ExpectRowsAsLibdwfl(const std::string& binary, const std::string& debug, uint64_t stride) {
  auto elf = ElfSymbols::Load(binary);
  EXPECT_TRUE(elf) << elf.error().message;
  auto rows = CfiRows::Open(binary, debug);
  EXPECT_TRUE(rows) << rows.error().message;
  const DwflRules reference(binary, debug);
  EXPECT_TRUE(reference.ok());
  if (!elf || !rows || !reference.ok()) return 0;
  size_t with_rows = 0;
  size_t failures = 0;
  auto fail = [&](uint64_t vaddr, const char* what) {
    if (failures++ < 8) ADD_FAILURE() << fmt::format("{} at {:#x}: {}", binary, vaddr, what);
  };
  for (const ElfSymbols::LoadSegment& segment : elf->segments()) {
    if (!segment.executable) continue;
    for (uint64_t vaddr = segment.vaddr; vaddr < segment.vaddr + segment.filesz; vaddr += stride) {
      const auto row = rows->RowAt(vaddr);
      const auto found = reference.At(vaddr);
      if (!found) {
        if (row) fail(vaddr, "a row libdwfl does not have");
        continue;
      }
      ++with_rows;
      if (!row) {
        fail(vaddr, "no row");
      } else if (!SameRule(row->rule, found->rule)) {
        fail(vaddr, "another rule");
      } else if (row->start > vaddr || vaddr >= row->end || row->end != found->end ||
                 row->start < found->start) {
        fail(vaddr, "a range not holding it");
      } else {
        // The range's ends have its rule too (libdw's own start may not).
        const auto first = reference.At(row->start);
        const auto last = reference.At(row->end - 1);
        if (!first || !last || !SameRule(first->rule, row->rule) ||
            !SameRule(last->rule, row->rule) || first->end != row->end) {
          fail(vaddr, "a range reaching past its row");
        }
      }
    }
  }
  EXPECT_EQ(failures, 0u) << binary;
  return with_rows;
}

TEST(CfiRowsTest, EhFrameAsLibdwfl) {
  EXPECT_GT(ExpectRowsAsLibdwfl(WORKLOAD_INLINE_PATH, "", 1), 100u);
  EXPECT_GT(ExpectRowsAsLibdwfl(WORKLOAD_INLINE_STRIPPED_PATH, "", 1), 100u);
  // main's epilogue restores its remembered state: libdw's row start is
  // the remembered row's there.
  EXPECT_GT(ExpectRowsAsLibdwfl(FIXTURE_PROG_STRIPPED_PATH, "", 1), 100u);
}

TEST(CfiRowsTest, DebugFrameOfTheBinaryOrItsDebugFile) {
  const size_t in_binary = ExpectRowsAsLibdwfl(WORKLOAD_UNWIND_DEBUGFRAME_PATH, "", 1);
  const size_t in_debug = ExpectRowsAsLibdwfl(WORKLOAD_UNWIND_DEBUGFRAME_STRIPPED_PATH,
                                              WORKLOAD_UNWIND_DEBUGFRAME_DEBUG_PATH, 1);
  const size_t without = ExpectRowsAsLibdwfl(WORKLOAD_UNWIND_DEBUGFRAME_STRIPPED_PATH, "", 1);
  EXPECT_EQ(in_binary, in_debug);
  EXPECT_GT(in_binary, without + 500) << "the workload's own functions have .debug_frame rows";
}

TEST(CfiRowsTest, LibcAsLibdwfl) {
  std::string libc;
  for (const auto& mapping : testing::SelfMappings()) {
    if (mapping.path.ends_with("/libc.so.6")) libc = mapping.path;
  }
  if (libc.empty()) GTEST_SKIP() << "no libc.so.6 mapped in this process";
  EXPECT_GT(ExpectRowsAsLibdwfl(libc, "", 97), 1000u);
}

TEST(CfiRowsTest, ABinaryThatIsNotElfIsAnError) {
  auto rows = CfiRows::Open(FIXTURE_PROG_SOURCE, "");
  ASSERT_FALSE(rows);
  EXPECT_NE(rows.error().message.find(FIXTURE_PROG_SOURCE), std::string::npos);
}

}  // namespace
}  // namespace sample
