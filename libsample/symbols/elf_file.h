// ElfFile: one file opened for reading with libelf.
//
// Owns the fd and the Elf* read from it; elf_end runs before the fd is
// closed. Move-only. Open() checks that the file is a regular ELF file and
// reads its header, so holders can rely on both.
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample {

class ElfFile {
 public:
  // Errors name `path` and the reason (open, not regular, not ELF, header).
  // `private_copy`: the file is mapped copy-on-write, so that section
  // headers may be changed in memory (DwarfFile hides sections it never
  // reads); the file itself is never written.
  static Result<ElfFile> Open(const std::string& path, bool private_copy = false);

  ElfFile(ElfFile&& other) noexcept;
  ElfFile& operator=(ElfFile&&) = delete;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile();

  Elf* get() const { return elf_; }
  int fd() const { return fd_.get(); }
  const GElf_Ehdr& ehdr() const { return ehdr_; }

 private:
  ElfFile(UniqueFd fd, Elf* elf) : fd_(std::move(fd)), elf_(elf) {}

  UniqueFd fd_;
  Elf* elf_ = nullptr;
  GElf_Ehdr ehdr_{};
};

// The section named `name`, or nullptr (also when section names are
// unreadable).
Elf_Scn* FindElfSection(Elf* elf, std::string_view name);
// The first section of type `type` (SHT_SYMTAB, ...), or nullptr.
Elf_Scn* FindElfSectionOfType(Elf* elf, Elf64_Word type);

// True if the file has DWARF to read: a .debug_info (or compressed
// .zdebug_info) section with contents, not the SHT_NOBITS placeholder a
// stripped file or an --only-keep-debug file's copied headers leave.
bool HasDebugInfo(Elf* elf);

// The load bias of the ELF file `path` mapped at `start` from file offset
// `pgoff`: the PT_LOAD segment holding that offset gives the vaddr found at
// `start`. 0 for ET_EXEC files (loaded at their vaddrs).
Result<uint64_t> ElfLoadBias(const std::string& path, uint64_t start, uint64_t pgoff);

}  // namespace sample
