// CfiFunctions on the fixtures: every function of a binary stripped of its
// symbols is found, from any address inside it, at the start its symbol
// has in the unstripped copy.
#include "libsample/symbols/cfi_functions.h"

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
    if (symbol.size < 4 || symbol.name.ends_with("@plt")) continue;
    for (uint64_t at : {symbol.start, symbol.start + 1, symbol.start + symbol.size / 2,
                        symbol.start + symbol.size - 1}) {
      EXPECT_EQ(cfi->StartOf(at), symbol.start) << symbol.name << " at +" << at - symbol.start;
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
    if (symbol.size < 4 || symbol.name.ends_with("@plt")) continue;
    for (uint64_t at = symbol.start; at < symbol.start + symbol.size; ++at) {
      const std::optional<CfiRange> range = cfi->RangeOf(at);
      ASSERT_TRUE(range) << symbol.name << " at +" << at - symbol.start;
      EXPECT_EQ(range->start, symbol.start) << symbol.name;
      // The FDE covers the function (gcc's FDEs end where its code does).
      EXPECT_EQ(range->end, symbol.start + symbol.size) << symbol.name;
    }
    ++checked;
  }
  EXPECT_GE(checked, 5u);
  EXPECT_EQ(cfi->RangeOf(0), std::nullopt);
}

TEST(CfiFunctionsTest, ABinaryWithoutCallFrameInformationIsAnError) {
  auto cfi = CfiFunctions::Open(FIXTURE_ELF32_PATH);  // -fno-asynchronous-unwind-tables
  EXPECT_FALSE(cfi.has_value());
}

}  // namespace
}  // namespace sample
