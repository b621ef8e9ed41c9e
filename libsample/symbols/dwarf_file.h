// DwarfFile: the DWARF of one ELF file, opened with libdw.
//
// Owns the ElfFile (fd and Elf*) and the Dwarf* read from it; dwarf_end runs
// before the Elf* and fd are released. Move-only; a moved-from DwarfFile holds
// nothing. libdw's Dwarf is not safe to use from two threads at once (elfutils
// 0.188 has no locks in it), so neither is a DwarfFile.
#pragma once

#include <elfutils/libdw.h>

#include <string>
#include <utility>

#include "libsample/result.h"
#include "libsample/symbols/elf_file.h"

namespace sample {

class DwarfFile {
 public:
  // Errors name `path` and the reason; a valid ELF file without DWARF is an
  // error too ("no DWARF"), which callers treat as "use ELF symbols only".
  // So is a zlib bomb (CheckCompressedSections, judged on the file opened,
  // which is what libdw reads): the error names the claimed size.
  static Result<DwarfFile> Open(const std::string& path);

  DwarfFile(DwarfFile&& other) noexcept
      : elf_(std::move(other.elf_)), dwarf_(std::exchange(other.dwarf_, nullptr)) {}
  DwarfFile& operator=(DwarfFile&&) = delete;
  DwarfFile(const DwarfFile&) = delete;
  DwarfFile& operator=(const DwarfFile&) = delete;
  ~DwarfFile();

  Dwarf* get() const { return dwarf_; }
  // The file read (for its owner and mode: fstat).
  int fd() const { return elf_.fd(); }

 private:
  DwarfFile(ElfFile elf, Dwarf* dwarf) : elf_(std::move(elf)), dwarf_(dwarf) {}

  // Declared first: destroyed after dwarf_, which borrows its Elf*.
  ElfFile elf_;
  Dwarf* dwarf_ = nullptr;
};

}  // namespace sample
