#include "libsample/symbols/kallsyms.h"

#include <string.h>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace sample {

namespace {

// One kallsyms line split into its fields; false for lines that are not
// well-formed text symbols.
struct KallsymsLine {
  uint64_t addr = 0;
  std::string_view name;
  std::string_view module;
};

bool ParseKallsymsLine(std::string_view line, KallsymsLine& out) {
  // addr SP type SP name [TAB [module]]
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || line.size() < sp1 + 4 || line[sp1 + 2] != ' ') {
    return false;
  }
  const char type = line[sp1 + 1];
  if (type != 't' && type != 'T' && type != 'w' && type != 'W') return false;
  auto [end, ec] = std::from_chars(line.data(), line.data() + sp1, out.addr, 16);
  if (ec != std::errc() || end != line.data() + sp1) return false;
  std::string_view rest = line.substr(sp1 + 3);
  const size_t tab = rest.find('\t');
  out.name = rest.substr(0, tab);
  // "addr t \tmodule" names nothing; kept, it would name every address
  // up to the next symbol "" and would not survive FormatKallsyms.
  if (out.name.empty()) return false;
  out.module = {};
  if (tab != std::string_view::npos) {
    std::string_view module = rest.substr(tab + 1);
    if (module.size() >= 2 && module.front() == '[' && module.back() == ']') {
      module = module.substr(1, module.size() - 2);
    }
    out.module = module;
  }
  return true;
}

// Calls fn(line) for each line of `text` (without its newline).
template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    fn(text.substr(0, eol));
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
  }
}

KernelSymbol ToSymbol(const KallsymsLine& line) {
  return KernelSymbol{line.addr, std::string(line.name), std::string(line.module)};
}

bool BySymbolAddress(const KernelSymbol& a, const KernelSymbol& b) { return a.addr < b.addr; }

// A text symbol's line and address.
struct Entry {
  uint64_t addr;
  std::string_view line;
};

// The text symbols of `text` in address order, lines of one address in
// file order (ParseKallsyms's order); empty when every address is zero.
// The core kernel's lines come sorted and only modules' follow unsorted,
// so only the part after the sorted prefix is sorted, then merged in (a
// stable sort of it all moved every entry log2(120k) times).
std::vector<Entry> SortedEntries(std::string_view text) {
  std::vector<Entry> entries;
  entries.reserve(text.size() / 40);
  bool any_nonzero = false;
  KallsymsLine parsed;
  ForEachLine(text, [&](std::string_view line) {
    if (!ParseKallsymsLine(line, parsed)) return;
    if (parsed.addr != 0) any_nonzero = true;
    entries.push_back(Entry{parsed.addr, line});
  });
  if (!any_nonzero) return {};
  const auto by_address = [](const Entry& a, const Entry& b) { return a.addr < b.addr; };
  const auto unsorted = std::is_sorted_until(entries.begin(), entries.end(), by_address);
  std::stable_sort(unsorted, entries.end(), by_address);
  std::inplace_merge(entries.begin(), unsorted, entries.end(), by_address);
  return entries;
}

// The start of the line that holds byte `pos` of `text`.
size_t LineStart(std::string_view text, size_t pos) {
  const void* newline = pos == 0 ? nullptr : memrchr(text.data(), '\n', pos);
  return newline == nullptr ? 0 : static_cast<const char*>(newline) - text.data() + 1;
}

// The start of the line after the one starting at `start` (text.size() at
// the end).
size_t NextLineStart(std::string_view text, size_t start) {
  const size_t newline = text.find('\n', start);
  return newline == std::string_view::npos ? text.size() : newline + 1;
}

std::string_view LineAt(std::string_view text, size_t start) {
  const size_t newline = text.find('\n', start);
  return text.substr(start, newline == std::string_view::npos ? newline : newline - start);
}

}  // namespace

std::vector<KernelSymbol> ParseKallsyms(std::string_view text) {
  std::vector<KernelSymbol> symbols;
  bool any_nonzero = false;
  KallsymsLine parsed;
  ForEachLine(text, [&](std::string_view line) {
    if (!ParseKallsymsLine(line, parsed)) return;
    if (parsed.addr != 0) any_nonzero = true;
    symbols.push_back(ToSymbol(parsed));
  });
  if (!any_nonzero) return {};
  std::stable_sort(symbols.begin(), symbols.end(), BySymbolAddress);
  return symbols;
}

std::vector<KernelSymbol> SelectKallsyms(std::string_view text, std::vector<uint64_t> addresses) {
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  // One pass, no table: a line at A is the cover of no sampled address
  // but perhaps the first at or after A, and the next symbol of none but
  // perhaps the last before A. The best of each slot, carried forward
  // (covers) and backward (next symbols), answers every address.
  struct Pick {
    uint64_t addr = 0;
    size_t line = SIZE_MAX;  // where the line starts; SIZE_MAX: none
  };
  std::vector<Pick> cover(addresses.size());
  std::vector<Pick> next(addresses.size());
  bool any_nonzero = false;
  KallsymsLine parsed;
  const size_t size = text.size();
  for (size_t start = 0; start < size;) {
    const size_t newline = text.find('\n', start);
    const size_t end = newline == std::string_view::npos ? size : newline;
    const size_t line = start;
    start = end + 1;
    if (!ParseKallsymsLine(text.substr(line, end - line), parsed)) continue;
    const uint64_t a = parsed.addr;
    any_nonzero |= a != 0;
    const size_t i = static_cast<size_t>(std::lower_bound(addresses.begin(), addresses.end(), a) -
                                         addresses.begin());
    // Of one address, the last line covers (a stable sort's last) and the
    // first is the next symbol.
    if (i < cover.size() && (cover[i].line == SIZE_MAX || a >= cover[i].addr)) cover[i] = {a, line};
    if (i > 0 && (next[i - 1].line == SIZE_MAX || a < next[i - 1].addr)) next[i - 1] = {a, line};
  }
  if (!any_nonzero) return {};
  for (size_t i = 1; i < cover.size(); ++i) {
    if (cover[i].line == SIZE_MAX) cover[i] = cover[i - 1];
  }
  for (size_t i = next.size(); i-- > 1;) {
    if (next[i - 1].line == SIZE_MAX) next[i - 1] = next[i];
  }
  // An address before every symbol or after the last has neither.
  std::vector<Pick> keep;
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (cover[i].line == SIZE_MAX || next[i].line == SIZE_MAX) continue;
    keep.push_back(cover[i]);
    keep.push_back(next[i]);
  }
  std::sort(keep.begin(), keep.end(), [](const Pick& a, const Pick& b) {
    return a.addr != b.addr ? a.addr < b.addr : a.line < b.line;
  });
  keep.erase(std::unique(keep.begin(), keep.end(),
                         [](const Pick& a, const Pick& b) { return a.line == b.line; }),
             keep.end());
  std::vector<KernelSymbol> out;
  out.reserve(keep.size());
  for (const Pick& pick : keep) {
    ParseKallsymsLine(LineAt(text, pick.line), parsed);
    out.push_back(ToSymbol(parsed));
  }
  return out;
}

std::string SortKallsyms(std::string_view text) {
  const std::vector<Entry> entries = SortedEntries(text);
  size_t size = 0;
  for (const Entry& e : entries) size += e.line.size() + 1;
  std::string sorted;
  sorted.reserve(size);
  for (const Entry& e : entries) {
    sorted.append(e.line);
    sorted.push_back('\n');
  }
  return sorted;
}

std::optional<std::vector<KernelSymbol>> SelectSortedKallsyms(std::string_view sorted,
                                                              std::vector<uint64_t> addresses) {
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  KallsymsLine parsed;
  std::vector<size_t> keep;  // line starts
  // Lines before `low` are at or below the address, lines from `high` on
  // above it. The addresses ascend, so each search starts where the last
  // one ended and gallops forward before it bisects: a dense set of
  // addresses reads each part of the table about once.
  size_t low = 0;
  for (uint64_t addr : addresses) {
    size_t high = sorted.size();
    // Whether the line holding byte `at` (in [low, high)) is at or below
    // addr; moves low or high past it. False for a line that is no symbol.
    const auto step = [&](size_t at) {
      const size_t start = LineStart(sorted, at);  // low is a line start: start >= low
      if (!ParseKallsymsLine(LineAt(sorted, start), parsed)) return false;
      if (parsed.addr <= addr) {
        low = NextLineStart(sorted, start);
      } else {
        high = start;
      }
      return true;
    };
    for (size_t stride = 256; low < high && high - low > stride; stride *= 2) {
      if (!step(low + stride)) return std::nullopt;
      if (high != sorted.size()) break;
    }
    while (low < high) {
      if (!step(low + (high - low) / 2)) return std::nullopt;
    }
    if (low == 0 || low == sorted.size()) continue;  // before the first or after the last
    keep.push_back(LineStart(sorted, low - 1));
    keep.push_back(low);
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  std::vector<KernelSymbol> out;
  out.reserve(keep.size());
  for (size_t start : keep) {
    if (!ParseKallsymsLine(LineAt(sorted, start), parsed)) return std::nullopt;
    out.push_back(ToSymbol(parsed));
  }
  return out;
}

const KernelSymbol* FindKernelSymbol(const std::vector<KernelSymbol>& sorted, uint64_t addr) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), addr,
                             [](uint64_t a, const KernelSymbol& s) { return a < s.addr; });
  if (it == sorted.begin() || it == sorted.end()) return nullptr;
  return &*(it - 1);
}

std::vector<KernelSymbol> SelectCoveringSymbols(const std::vector<KernelSymbol>& sorted,
                                                std::vector<uint64_t> addresses) {
  std::sort(addresses.begin(), addresses.end());
  std::vector<size_t> keep;
  for (uint64_t addr : addresses) {
    const KernelSymbol* s = FindKernelSymbol(sorted, addr);
    if (s == nullptr) continue;
    const size_t index = static_cast<size_t>(s - sorted.data());
    keep.push_back(index);
    keep.push_back(index + 1);  // bounds the range; exists because FindKernelSymbol checked
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  std::vector<KernelSymbol> out;
  for (size_t i : keep) out.push_back(sorted[i]);
  return out;
}

std::string FormatKallsyms(const std::vector<KernelSymbol>& symbols) {
  std::string text;
  for (const KernelSymbol& s : symbols) {
    text += fmt::format("{:016x} t {}", s.addr, s.name);
    if (!s.module.empty()) text += fmt::format("\t[{}]", s.module);
    text += '\n';
  }
  return text;
}

}  // namespace sample
