// Fuzz target: /tmp/perf-PID.map text, which any JIT (or anyone who can
// write to /tmp) produces. Besides not crashing, every symbol Find returns
// must contain the address asked for. Input: the map text.
#include <cstdlib>
#include <string_view>

#include "libsample/symbols/perf_map.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(perf_map)(std::span<const std::byte> input) {
  using namespace sample;
  const PerfMap map =
      PerfMap::Parse(std::string_view(reinterpret_cast<const char*>(input.data()), input.size()));
  auto check = [&](uint64_t addr) {
    const PerfMapSymbol* symbol = map.Find(addr);
    if (symbol == nullptr) return;
    const uint64_t size = symbol->size == 0 ? 1 : symbol->size;
    if (addr < symbol->start || addr - symbol->start >= size) std::abort();
  };
  for (const PerfMapSymbol& symbol : map.symbols()) {
    check(symbol.start);
    check(symbol.start - 1);
    check(symbol.start + symbol.size);
    if (symbol.size > 0) check(symbol.start + symbol.size - 1);
  }
  return 0;
}
