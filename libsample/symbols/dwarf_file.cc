#include "libsample/symbols/dwarf_file.h"

#include <fmt/format.h>

namespace sample {

Result<DwarfFile> DwarfFile::Open(const std::string& path) {
  TRY_ASSIGN(auto elf, ElfFile::Open(path));
  // Checked first so that "no DWARF" is told apart from a broken file:
  // dwarf_begin_elf also fails on a file whose .debug_info was stripped.
  if (!HasDebugInfo(elf.get())) return Fail(fmt::format("{}: no DWARF", path));
  Dwarf* dwarf = dwarf_begin_elf(elf.get(), DWARF_C_READ, nullptr);
  if (dwarf == nullptr)
    return Fail(fmt::format("{}: cannot read DWARF: {}", path, dwarf_errmsg(-1)));
  return DwarfFile(std::move(elf), dwarf);
}

DwarfFile::~DwarfFile() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
}

}  // namespace sample
