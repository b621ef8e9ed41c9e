#include "libsample/kallsyms.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace sample {

std::vector<KernelSymbol> ParseKallsyms(std::string_view text) {
  std::vector<KernelSymbol> symbols;
  bool any_nonzero = false;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    // addr SP type SP name [TAB [module]]
    const size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || line.size() < sp1 + 4 || line[sp1 + 2] != ' ') continue;
    const char type = line[sp1 + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    KernelSymbol s;
    auto [end, ec] = std::from_chars(line.data(), line.data() + sp1, s.addr, 16);
    if (ec != std::errc() || end != line.data() + sp1) continue;
    std::string_view rest = line.substr(sp1 + 3);
    const size_t tab = rest.find('\t');
    s.name = rest.substr(0, tab);
    if (tab != std::string_view::npos) {
      std::string_view module = rest.substr(tab + 1);
      if (module.size() >= 2 && module.front() == '[' && module.back() == ']') {
        module = module.substr(1, module.size() - 2);
      }
      s.module = module;
    }
    if (s.addr != 0) any_nonzero = true;
    symbols.push_back(std::move(s));
  }
  if (!any_nonzero) return {};
  std::stable_sort(symbols.begin(), symbols.end(),
                   [](const KernelSymbol& a, const KernelSymbol& b) { return a.addr < b.addr; });
  return symbols;
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
