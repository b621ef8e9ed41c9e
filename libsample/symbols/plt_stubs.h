// The x86 PLT stubs of an ELF file, named `name@plt` as objdump names them
// (ElfSymbols adds them to a binary's symbols).
#pragma once

#include <gelf.h>

#include <vector>

#include "libsample/symbols/elf_symbols.h"

namespace sample {

// Names the x86 PLT stubs `name@plt`, as objdump does: each entry of .plt,
// .plt.sec (IBT) and .plt.got is decoded to the GOT slot it jumps through, and
// the slot's relocation names the symbol. Decoding, rather than assuming stub
// i belongs to relocation i, also handles libc, whose IRELATIVE slots are not
// in stub order. Entries that jump elsewhere (the resolver header, IBT lazy
// stubs) get no symbol. Other machines get no PLT symbols. `symbols` must be
// sorted (ifunc names are looked up in it); the stubs are appended unsorted.
void AddPltStubs(Elf* elf, const GElf_Ehdr& ehdr, std::vector<ElfSymbol>* symbols);

}  // namespace sample
