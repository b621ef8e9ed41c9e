// Fuzz target: BinarySymbolizer on an arbitrary file: ELF symbols plus the
// DWARF unit table, DIE trees and line tables read through libdw, with
// lookups at every symbol and at a few addresses from the input. Crashes
// inside libdw itself are elfutils' to fix; this target is after our
// walking of what libdw returns. Input: u64 x 4 addresses, then the file.
#include <cstdlib>

#include "libsample/memory_file.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(dwarf)(std::span<const std::byte> input) {
  using namespace sample;
  static MemoryFile* file = [] {
    auto created = MemoryFile::Create("fuzz-dwarf", {});
    if (!created) std::abort();
    return new MemoryFile(std::move(*created));
  }();
  fuzz::InputTaker take(input);
  std::vector<uint64_t> addresses(4);
  for (uint64_t& addr : addresses) addr = take.Take<uint64_t>();
  if (!file->Assign(take.rest())) std::abort();

  auto symbolizer = BinarySymbolizer::Open(file->path());
  if (!symbolizer) return 0;
  // Bounded: a fuzzed file can claim many symbols, each lookup indexes a unit.
  for (const ElfSymbol& symbol : symbolizer->elf_symbols().symbols()) {
    if (addresses.size() >= 64) break;
    addresses.push_back(symbol.start);
    addresses.push_back(symbol.start + symbol.size / 2);
  }
  volatile uint64_t sum = 0;
  for (uint64_t addr : addresses) {
    for (const SymbolFrame& frame : symbolizer->SymbolizeVaddr(addr)) {
      sum = sum + frame.function.size() + frame.file.size() + frame.line;
    }
    for (const SymbolFrame& frame : symbolizer->SymbolizeFileOffset(addr)) {
      sum = sum + frame.function.size();
    }
  }
  if (symbolizer->indexed_unit_count() > symbolizer->unit_count()) std::abort();
  return 0;
}
