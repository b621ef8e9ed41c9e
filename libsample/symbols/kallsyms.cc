#include "libsample/symbols/kallsyms.h"

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
  // Each text symbol as (address, line), in file order; a stable sort then
  // matches ParseKallsyms's order exactly (the core kernel's lines are
  // already sorted, so this is cheap).
  struct Entry {
    uint64_t addr;
    std::string_view line;
  };
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
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.addr < b.addr; });
  std::sort(addresses.begin(), addresses.end());
  std::vector<size_t> keep;
  for (uint64_t addr : addresses) {
    auto it = std::upper_bound(entries.begin(), entries.end(), addr,
                               [](uint64_t a, const Entry& e) { return a < e.addr; });
    if (it == entries.begin() || it == entries.end()) continue;
    const size_t index = static_cast<size_t>(it - entries.begin()) - 1;
    keep.push_back(index);
    keep.push_back(index + 1);
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  std::vector<KernelSymbol> out;
  out.reserve(keep.size());
  for (size_t i : keep) {
    ParseKallsymsLine(entries[i].line, parsed);
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
