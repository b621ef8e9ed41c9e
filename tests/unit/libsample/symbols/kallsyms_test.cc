#include "libsample/symbols/kallsyms.h"

#include <gtest/gtest.h>

#include "libsample/symbols/perf_buildid_cache.h"

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

// Aliases (one address, several lines: their file order is kept) and a
// module whose lines are out of order, after the sorted core.
constexpr std::string_view kAliased =
    "ffffffff81000000 T srso_alias\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81000100 t helper_a\n"
    "ffffffff81000100 t helper_a_alias\n"
    "ffffffff81000200 D some_data\n"
    "ffffffff81000300 W weak_fn\n"
    "ffffffffc0000200 t mod_late\t[mymod]\n"
    "ffffffffc0000000 t mod_fn\t[mymod]\n"
    "ffffffffc0000000 t mod_fn_alias\t[mymod]\n"
    "ffffffffc0000100 t mod_end\t[mymod]\n";

std::vector<uint64_t> ProbeAddresses() {
  std::vector<uint64_t> addresses = {0,
                                     0xffffffffffffffffu,
                                     0xffffffffc0000000u,
                                     0xffffffffc00000ffu,
                                     0xffffffffc0000100u,
                                     0xffffffffc0000250u};
  for (uint64_t a = 0xffffffff80fffff0u; a < 0xffffffff81000400u; a += 0x11) addresses.push_back(a);
  return addresses;
}

void ExpectSameSymbols(const std::vector<KernelSymbol>& a, const std::vector<KernelSymbol>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].addr, b[i].addr) << i;
    EXPECT_EQ(a[i].name, b[i].name) << i;
    EXPECT_EQ(a[i].module, b[i].module) << i;
  }
}

TEST(KallsymsTest, SortedTextKeepsTextSymbolsInParseOrder) {
  const std::string sorted = SortKallsyms(kAliased);
  EXPECT_EQ(sorted,
            "ffffffff81000000 T srso_alias\n"
            "ffffffff81000000 T _stext\n"
            "ffffffff81000000 T _text\n"
            "ffffffff81000100 t helper_a\n"
            "ffffffff81000100 t helper_a_alias\n"
            "ffffffff81000300 W weak_fn\n"
            "ffffffffc0000000 t mod_fn\t[mymod]\n"
            "ffffffffc0000000 t mod_fn_alias\t[mymod]\n"
            "ffffffffc0000100 t mod_end\t[mymod]\n"
            "ffffffffc0000200 t mod_late\t[mymod]\n");
  const auto reparsed = ParseKallsyms(sorted);
  const auto all = ParseKallsyms(kAliased);
  ExpectSameSymbols(reparsed, all);
  EXPECT_TRUE(SortKallsyms("0000000000000000 T _text\n0000000000000000 t foo\n").empty());
}

TEST(KallsymsTest, BisectingTheSortedTextMatchesTheFullSelection) {
  for (std::string_view text : {kText, kAliased}) {
    const std::vector<uint64_t> addresses = ProbeAddresses();
    const auto selected = SelectSortedKallsyms(SortKallsyms(text), addresses);
    ASSERT_TRUE(selected.has_value());
    ExpectSameSymbols(*selected, SelectKallsyms(text, addresses));
    ExpectSameSymbols(*selected, SelectCoveringSymbols(ParseKallsyms(text), addresses));
    // One address at a time gives the same lines.
    for (uint64_t a : addresses) {
      ExpectSameSymbols(*SelectSortedKallsyms(SortKallsyms(text), {a}), SelectKallsyms(text, {a}));
    }
  }
  // The last line needs no newline.
  const auto unterminated = SelectSortedKallsyms(
      "ffffffff81000000 T _text\nffffffff81000100 t next", {0xffffffff81000010u});
  ASSERT_TRUE(unterminated.has_value());
  ASSERT_EQ(unterminated->size(), 2u);
  EXPECT_EQ((*unterminated)[1].name, "next");
  EXPECT_TRUE(SelectSortedKallsyms("", {0xffffffff81000010u})->empty());
}

// The lean selection against the full parse on this host's table (120k+
// lines, modules after the core, aliases): addresses at, between, before
// and after its symbols, and ones spread over its whole range.
TEST(KallsymsTest, LeanSelectionMatchesTheFullParseOnThisHostsTable) {
  auto text = ReadBoundedFile("/proc/kallsyms", size_t{64} << 20);
  if (!text) GTEST_SKIP() << "no /proc/kallsyms here";
  const auto all = ParseKallsyms(*text);
  if (all.size() < 2 || all.front().addr == all.back().addr) {
    GTEST_SKIP() << "/proc/kallsyms hides its addresses (kptr_restrict)";
  }
  std::vector<uint64_t> addresses = {0, all.front().addr - 1, all.back().addr, all.back().addr + 1,
                                     UINT64_MAX};
  uint64_t x = 88172645463325252ull;  // xorshift: the same addresses every run
  for (int i = 0; i < 3000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const KernelSymbol& s = all[x % all.size()];
    addresses.push_back(s.addr + (i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : x % 4096));
    addresses.push_back(all.front().addr + x % (all.back().addr - all.front().addr));
  }
  ExpectSameSymbols(SelectKallsyms(*text, addresses), SelectCoveringSymbols(all, addresses));
  for (size_t i = 0; i < 12; ++i) {
    ExpectSameSymbols(SelectKallsyms(*text, {addresses[i]}),
                      SelectCoveringSymbols(all, {addresses[i]}));
  }
}

TEST(KallsymsTest, ASortedTextThatIsNotOneIsRefusedOrHarmless) {
  // A line that is not a text symbol's: not what SortKallsyms writes.
  EXPECT_FALSE(SelectSortedKallsyms("ffffffff81000000 T _text\ngarbage\nffffffff81000200 t b\n",
                                    {0xffffffff81000100u, 0xffffffff81000210u})
                   .has_value());
  // Lines out of order: some answer, no crash.
  const std::string unsorted =
      "ffffffff81000300 t c\nffffffff81000000 T a\n\n\nffffffff81000200 t b\n";
  std::vector<uint64_t> addresses;
  for (uint64_t a = 0xffffffff80ffff00u; a < 0xffffffff81000400u; a += 0x40) addresses.push_back(a);
  (void)SelectSortedKallsyms(unsorted, addresses);
  (void)SelectSortedKallsyms("\n\n\n", addresses);
}

}  // namespace
}  // namespace sample
