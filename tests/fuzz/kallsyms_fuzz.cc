// Fuzz target: kallsyms text as a recording stores it (kKernelSymbols) and
// as /proc/kallsyms gives it. Checks, beyond not crashing, the promises
// kallsyms.h makes: SelectKallsyms equals SelectCoveringSymbols over the
// full parse, and so does SelectSortedKallsyms over SortKallsyms's text
// (over the raw text it may refuse or answer, never crash), FindKernelSymbol
// finds a symbol at or below the address, and what FormatKallsyms writes
// parses back to the same symbols. Input: u8
// address count, that many u64 addresses, then the text.
#include <cstdlib>
#include <string_view>
#include <vector>

#include "libsample/symbols/kallsyms.h"
#include "tests/fuzz/fuzz_target.h"

namespace sample {
namespace {

bool Same(const std::vector<KernelSymbol>& a, const std::vector<KernelSymbol>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].addr != b[i].addr || a[i].name != b[i].name || a[i].module != b[i].module) {
      return false;
    }
  }
  return true;
}

}  // namespace
}  // namespace sample

SAMPLE_FUZZ_TARGET(kallsyms)(std::span<const std::byte> input) {
  using namespace sample;
  fuzz::InputTaker take(input);
  std::vector<uint64_t> addresses(take.Take<uint8_t>() % 16);
  for (uint64_t& addr : addresses) addr = take.Take<uint64_t>();
  const std::string_view text(reinterpret_cast<const char*>(take.rest().data()),
                              take.rest().size());

  const std::vector<KernelSymbol> all = ParseKallsyms(text);
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i - 1].addr > all[i].addr) std::abort();  // promised sorted
  }
  for (uint64_t addr : addresses) {
    const KernelSymbol* symbol = FindKernelSymbol(all, addr);
    if (symbol != nullptr && symbol->addr > addr) std::abort();
  }
  const std::vector<KernelSymbol> selected = SelectKallsyms(text, addresses);
  if (!Same(selected, SelectCoveringSymbols(all, addresses))) std::abort();
  const auto bisected = SelectSortedKallsyms(SortKallsyms(text), addresses);
  if (!bisected || !Same(*bisected, selected)) std::abort();
  (void)SelectSortedKallsyms(text, addresses);
  if (!Same(ParseKallsyms(FormatKallsyms(all)), all)) std::abort();
  return 0;
}
