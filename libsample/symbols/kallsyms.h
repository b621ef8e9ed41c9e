// Kernel symbols in /proc/kallsyms form ("ffffffff81000000 T _text [mod]").
//
// The recorder keeps only the symbols that cover kernel addresses it saw,
// plus each one's successor so the covering range stays bounded; the
// reporter looks addresses up in that subset. Only text symbols (t, T, w, W)
// are kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sample {

struct KernelSymbol {
  uint64_t addr = 0;
  std::string name;
  std::string module;  // empty for the core kernel
};

// Parses kallsyms text; returns text symbols sorted by address. Lines that
// do not parse are skipped. All-zero addresses (kptr_restrict) give an
// empty result.
std::vector<KernelSymbol> ParseKallsyms(std::string_view text);

// The symbols covering each address in `addresses` and the symbol after
// each of those, sorted and without duplicates.
std::vector<KernelSymbol> SelectCoveringSymbols(const std::vector<KernelSymbol>& sorted,
                                                std::vector<uint64_t> addresses);

// SelectCoveringSymbols(ParseKallsyms(text), addresses), without building
// the full table: one pass over the ~120k lines, each line's address
// parsed and placed among the sampled addresses, names only for the
// symbols kept. Measured on /proc/kallsyms (5.4 MB): about a quarter of the
// full parse's time and no 9 MB of transient strings.
std::vector<KernelSymbol> SelectKallsyms(std::string_view text, std::vector<uint64_t> addresses);

// The text symbol lines of kallsyms `text`, each with its newline, in the
// order ParseKallsyms sorts them (by address; lines of one address in file
// order); empty when every address is zero (hidden). What
// SelectSortedKallsyms reads.
std::string SortKallsyms(std::string_view text);

// SelectKallsyms(text, addresses) from `sorted`, SortKallsyms(text): each
// distinct address costs one bisection of the lines, so a mapped 5.4 MB
// table is read a few pages per address instead of parsed whole (0.1 ms
// instead of 12 for a short recording's handful of addresses). nullopt if
// a line it reads is not a text symbol's: not what SortKallsyms wrote.
// Lines out of order give wrong symbols, never a crash.
std::optional<std::vector<KernelSymbol>> SelectSortedKallsyms(std::string_view sorted,
                                                              std::vector<uint64_t> addresses);

// Formats symbols back into kallsyms text (type 't'), for storage.
std::string FormatKallsyms(const std::vector<KernelSymbol>& symbols);

// The symbol containing `addr` in a sorted table, or nullptr: the last
// symbol at or below addr, unless addr is past the table's last symbol.
const KernelSymbol* FindKernelSymbol(const std::vector<KernelSymbol>& sorted, uint64_t addr);

}  // namespace sample
