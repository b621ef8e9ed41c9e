// CfiFunctions on the fixtures: every function of a binary stripped of its
// symbols is found, from any address inside it, at the start its symbol
// has in the unstripped copy; the addresses StartOf says share its answer
// do.
#include "libsample/symbols/cfi_functions.h"

#include <dlfcn.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "libsample/symbols/elf_symbols.h"

namespace sample {
namespace {

TEST(CfiFunctionsTest, StrippedFunctionsStartWhereTheirSymbolsDid) {
  auto symbols = ElfSymbols::Load(FIXTURE_PROG_PATH);
  ASSERT_TRUE(symbols) << symbols.error().message;
  auto cfi = CfiFunctions::Open(FIXTURE_PROG_STRIPPED_PATH);
  ASSERT_TRUE(cfi) << cfi.error().message;
  size_t checked = 0;
  for (const ElfSymbol& symbol : symbols->symbols()) {
    // Functions with a size; PLT stubs share the one FDE of .plt.
    if (symbol.size < 4 || symbol.name().ends_with("@plt")) continue;
    for (uint64_t at : {symbol.start, symbol.start + 1, symbol.start + symbol.size / 2,
                        symbol.start + symbol.size - 1}) {
      EXPECT_EQ(cfi->StartOf(at), symbol.start) << symbol.name() << " at +" << at - symbol.start;
    }
    ++checked;
  }
  EXPECT_GE(checked, 5u);
  EXPECT_EQ(cfi->StartOf(0), std::nullopt) << "no FDE covers the ELF header";
}

TEST(CfiFunctionsTest, RangesHoldTheWholeFunctionFromItsStart) {
  auto symbols = ElfSymbols::Load(FIXTURE_PROG_PATH);
  ASSERT_TRUE(symbols) << symbols.error().message;
  auto cfi = CfiFunctions::Open(FIXTURE_PROG_STRIPPED_PATH);
  ASSERT_TRUE(cfi) << cfi.error().message;
  size_t checked = 0;
  for (const ElfSymbol& symbol : symbols->symbols()) {
    if (symbol.size < 4 || symbol.name().ends_with("@plt")) continue;
    for (uint64_t at = symbol.start; at < symbol.start + symbol.size; ++at) {
      const std::optional<CfiRange> range = cfi->RangeOf(at);
      ASSERT_TRUE(range) << symbol.name() << " at +" << at - symbol.start;
      EXPECT_EQ(range->start, symbol.start) << symbol.name();
      // The FDE covers the function (gcc's FDEs end where its code does).
      EXPECT_EQ(range->end, symbol.start + symbol.size) << symbol.name();
    }
    ++checked;
  }
  EXPECT_GE(checked, 5u);
  EXPECT_EQ(cfi->RangeOf(0), std::nullopt);
}

// The addresses StartOf says share an answer do, on this process's libc
// (whose FDEs remember and restore states), byte after byte of its code.
TEST(CfiFunctionsTest, AddressesSaidToShareAStartDo) {
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&qsort), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  auto symbols = ElfSymbols::Load(info.dli_fname);
  ASSERT_TRUE(symbols) << symbols.error().message;
  auto cfi = CfiFunctions::Open(info.dli_fname);
  ASSERT_TRUE(cfi) << cfi.error().message;
  uint64_t text = 0;
  for (const auto& segment : symbols->segments()) {
    if (segment.executable) text = segment.vaddr;
  }
  ASSERT_NE(text, 0u);
  size_t shared = 0;
  CfiRange same;
  std::optional<uint64_t> start;
  for (uint64_t at = text; at < text + (256 << 10); ++at) {
    const std::optional<uint64_t> alone = cfi->StartOf(at);
    if (at >= same.start && at < same.end) {
      ASSERT_EQ(alone, start) << std::hex << at;
      ++shared;
      continue;
    }
    start = cfi->StartOf(at, &same);
    ASSERT_EQ(start, alone);
    ASSERT_TRUE(at >= same.start && at < same.end) << std::hex << at;
  }
  EXPECT_GT(shared, size_t{128} << 10) << "most bytes share their row's answer";
}

TEST(CfiFunctionsTest, ABinaryWithoutCallFrameInformationIsAnError) {
  auto cfi = CfiFunctions::Open(FIXTURE_ELF32_PATH);  // -fno-asynchronous-unwind-tables
  EXPECT_FALSE(cfi.has_value());
}

}  // namespace
}  // namespace sample
