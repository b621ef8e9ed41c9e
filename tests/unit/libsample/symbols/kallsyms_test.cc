#include "libsample/symbols/kallsyms.h"

#include <gtest/gtest.h>

namespace sample {
namespace {

constexpr std::string_view kText =
    "ffffffff81000000 T _text\n"
    "ffffffff81000100 t helper_a\n"
    "ffffffff81000200 D some_data\n"  // not text: dropped
    "ffffffff81000300 W weak_fn\n"
    "ffffffff81000050 T early\n"  // out of order in the file
    "garbage line\n"
    "ffffffffc0000000 t mod_fn\t[mymod]\n"
    "ffffffffc0000100 t mod_end\t[mymod]\n";

TEST(KallsymsTest, ParsesTextSymbolsSortedWithModules) {
  const auto symbols = ParseKallsyms(kText);
  ASSERT_EQ(symbols.size(), 6u);
  EXPECT_EQ(symbols[0].name, "_text");
  EXPECT_EQ(symbols[1].name, "early");
  EXPECT_EQ(symbols[1].addr, 0xffffffff81000050u);
  EXPECT_EQ(symbols[2].name, "helper_a");
  EXPECT_EQ(symbols[3].name, "weak_fn");
  EXPECT_EQ(symbols[4].name, "mod_fn");
  EXPECT_EQ(symbols[4].module, "mymod");
  EXPECT_TRUE(symbols[0].module.empty());
}

TEST(KallsymsTest, HiddenAddressesGiveNothing) {
  EXPECT_TRUE(ParseKallsyms("0000000000000000 T _text\n0000000000000000 t foo\n").empty());
}

TEST(KallsymsTest, LinesWithoutANameAreSkipped) {
  // Found by the kallsyms fuzz target: an empty name parsed, then vanished
  // when the table was written back with FormatKallsyms.
  const auto symbols = ParseKallsyms(
      "ffffffff81000000 T _text\nffffffff81000300 W \t\nffffffff81000400 t \t[mod]\n");
  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols[0].name, "_text");
  EXPECT_EQ(ParseKallsyms(FormatKallsyms(symbols)).size(), 1u);
}

TEST(KallsymsTest, FindUsesTheLastSymbolAtOrBelow) {
  const auto symbols = ParseKallsyms(kText);
  EXPECT_EQ(FindKernelSymbol(symbols, 0xffffffff80ffffffu), nullptr);
  EXPECT_EQ(FindKernelSymbol(symbols, 0xffffffff81000000u)->name, "_text");
  EXPECT_EQ(FindKernelSymbol(symbols, 0xffffffff8100004fu)->name, "_text");
  EXPECT_EQ(FindKernelSymbol(symbols, 0xffffffff81000050u)->name, "early");
  EXPECT_EQ(FindKernelSymbol(symbols, 0xffffffff810002ffu)->name, "helper_a");
  // Past the last symbol there is no telling where it ends.
  EXPECT_EQ(FindKernelSymbol(symbols, 0xffffffffc0000100u), nullptr);
}

TEST(KallsymsTest, SubsetKeepsCoveringSymbolsAndTheirSuccessors) {
  const auto all = ParseKallsyms(kText);
  const auto subset = SelectCoveringSymbols(
      all, {0xffffffff81000150u, 0xffffffff81000120u, 0xffffffffc0000010u, 0x1234u});
  ASSERT_EQ(subset.size(), 4u);
  EXPECT_EQ(subset[0].name, "helper_a");
  EXPECT_EQ(subset[1].name, "weak_fn");
  EXPECT_EQ(subset[2].name, "mod_fn");
  EXPECT_EQ(subset[3].name, "mod_end");
  // The stored subset answers the sampled addresses as the full table does.
  const auto reparsed = ParseKallsyms(FormatKallsyms(subset));
  ASSERT_EQ(reparsed.size(), subset.size());
  for (uint64_t addr : {0xffffffff81000150u, 0xffffffff81000120u}) {
    EXPECT_EQ(FindKernelSymbol(reparsed, addr)->name, FindKernelSymbol(all, addr)->name);
  }
  EXPECT_EQ(FindKernelSymbol(reparsed, 0xffffffffc0000010u)->module, "mymod");
}

TEST(KallsymsTest, LeanSelectionMatchesTheFullParse) {
  const auto all = ParseKallsyms(kText);
  std::vector<uint64_t> addresses = {0x1234u,
                                     0xffffffff81000000u,
                                     0xffffffff81000049u,
                                     0xffffffff81000050u,
                                     0xffffffff81000150u,
                                     0xffffffff81000300u,
                                     0xffffffffc0000010u,
                                     0xffffffffc0000100u,
                                     0xffffffffffffffffu};
  for (uint64_t a = 0xffffffff80fffff0u; a < 0xffffffff81000400u; a += 0x17) {
    addresses.push_back(a);
  }
  const auto lean = SelectKallsyms(kText, addresses);
  const auto full = SelectCoveringSymbols(all, addresses);
  ASSERT_EQ(lean.size(), full.size());
  for (size_t i = 0; i < lean.size(); ++i) {
    EXPECT_EQ(lean[i].addr, full[i].addr);
    EXPECT_EQ(lean[i].name, full[i].name);
    EXPECT_EQ(lean[i].module, full[i].module);
  }
  EXPECT_EQ(lean.size(), 6u);
  EXPECT_TRUE(SelectKallsyms("0000000000000000 T _text\n0000000000000000 t foo\n", {0x10}).empty());
}

}  // namespace
}  // namespace sample
