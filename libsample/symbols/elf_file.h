// ElfFile: one file opened for reading with libelf.
//
// Owns the fd and the Elf* read from it; elf_end runs before the fd is
// closed. Move-only. Open() checks that the file is a regular ELF file and
// reads its header, so holders can rely on both.
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// An ELF file's PT_LOAD segments, what a load bias is computed from: read
// once per file, then each mapping's bias is arithmetic (a report of
// thousands of processes, each with its own ASLR addresses, opened the
// file for each).
struct ElfLoadLayout {
  struct Segment {
    uint64_t offset = 0;  // p_offset
    uint64_t filesz = 0;  // p_filesz
    uint64_t vaddr = 0;   // p_vaddr
    bool executable = false;
  };
  bool fixed_address = false;  // ET_EXEC: loaded at its vaddrs
  std::vector<Segment> segments;

  // The bias of the file mapped at `start` from file offset `pgoff`: the
  // segment holding that offset gives the vaddr found at `start` (PF_X
  // first: lld and mold pack the executable segment into the page of the
  // one before). 0 when fixed; nullopt when no segment holds `pgoff`.
  std::optional<uint64_t> BiasOf(uint64_t start, uint64_t pgoff) const;
};
Result<ElfLoadLayout> ReadElfLoadLayout(const std::string& path);

// The load bias of the ELF file `path` mapped at `start` from file offset
// `pgoff` (ReadElfLoadLayout, then BiasOf).
Result<uint64_t> ElfLoadBias(const std::string& path, uint64_t start, uint64_t pgoff);

}  // namespace sample
