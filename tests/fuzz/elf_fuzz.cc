// Fuzz target: ELF files as the symbolizer reads them with libelf: function
// symbols (.symtab/.dynsym), PLT stubs, load segments, the build-id note
// and .gnu_debuglink, then lookups over every symbol. A report reads any
// file a recording names (or a --symfs holds), so these are untrusted
// bytes. Input: the file.
#include <cstdlib>

#include "libsample/memory_file.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/gnu_debuglink.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(elf)(std::span<const std::byte> input) {
  using namespace sample;
  static MemoryFile* file = [] {
    auto created = MemoryFile::Create("fuzz-elf", {});
    if (!created) std::abort();
    return new MemoryFile(std::move(*created));
  }();
  if (!file->Assign(input)) std::abort();

  volatile uint64_t sum = 0;
  if (auto opened = ElfFile::Open(file->path())) {
    if (auto link = ReadGnuDebugLink(opened->get())) sum = sum + link->crc + link->file_name.size();
    sum = sum + HasDebugInfo(opened->get()) + ReadElfBuildId(*opened).size();
  }
  auto symbols = ElfSymbols::Load(file->path());
  if (!symbols) return 0;
  const std::vector<ElfSymbol>& all = symbols->symbols();
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0 && all[i - 1].start >= all[i].start) std::abort();  // sorted, one per address
    for (uint64_t vaddr : {all[i].start, all[i].start + all[i].size, all[i].start - 1}) {
      const ElfSymbol* found = symbols->Find(vaddr);
      if (found != nullptr && found->start > vaddr) std::abort();
      if (auto offset = symbols->VaddrToFileOffset(vaddr)) {
        sum = sum + symbols->FileOffsetToVaddr(*offset).value_or(0);
      }
    }
  }
  return 0;
}
