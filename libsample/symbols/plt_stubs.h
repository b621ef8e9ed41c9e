// The x86 PLT stubs of an ELF file, named `name@plt` as objdump names them
// (ElfSymbols adds them to a binary's symbols).
#pragma once

#include <gelf.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "libsample/symbols/elf_symbols.h"

namespace sample {

// Names the x86 PLT stubs `name@plt`, as objdump does: each entry of .plt,
// .plt.sec (IBT) and .plt.got is decoded to the GOT slot it jumps through, and
// the slot's relocation names the symbol. Decoding, rather than assuming stub
// i belongs to relocation i, also handles libc, whose IRELATIVE slots are not
// in stub order. Entries that jump elsewhere (the resolver header, IBT lazy
// stubs) get no symbol. Other machines get no PLT symbols. `symbols` must be
// sorted (ifunc names are looked up in it); the stubs come unsorted.
struct PltStub {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string name;  // "name@plt", the name mangled as the file spells it
};
std::vector<PltStub> FindPltStubs(Elf* elf, const GElf_Ehdr& ehdr,
                                  const std::vector<ElfSymbol>& symbols);
// How many stubs FindPltStubs can find at most (the PLT sections' entries):
// room to keep for them.
size_t PltEntryCount(Elf* elf, const GElf_Ehdr& ehdr);

}  // namespace sample
