// ElfSymbols: the function symbols and load layout of one ELF file.
//
// Read once with libelf in Load(); everything needed later (symbols and
// their names, PT_LOAD segments, the build-id) is copied out, so no libelf
// object outlives Load and an ElfSymbols is a plain value that can be
// shared read-only across threads. Names are kept as the file spells them
// and demangled when asked for (ElfSymbol::name). Symbols come from .symtab
// when the file has one, otherwise from .dynsym and, in a Go binary, from
// the function table its runtime keeps (.gopclntab, go_pclntab.h: a
// stripped Go binary's names, files and lines); on x86_64 and i386 the PLT
// stubs get synthesised `name@plt` symbols. Owns its copies; holds no fd or
// Elf*.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"
#include "libsample/symbols/demangle.h"  // Demangle, which the symbols use
#include "libsample/symbols/elf_build_id.h"  // ReadElfBuildId, ReadGoBuildId
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/go_pclntab.h"

namespace sample {

struct ElfSymbol {
  uint64_t start = 0;  // ELF virtual address (st_value)
  uint64_t size = 0;   // st_size; 0 = unknown, covers up to the next symbol
  // As the file names it (a PLT stub: "name@plt"), held by the ElfSymbols
  // this symbol came from (and by its copies): an ElfSymbol copied out
  // must not outlive them.
  std::string_view mangled;
  bool object = false;  // a variable (STT_OBJECT; LoadWithObjects only)

  // Demangled, at each call: a binary's table is read whole to find a few
  // of its functions (cc1plus: 31,000 symbols, whose demangling took
  // longer than the rest of the read together).
  std::string name() const { return Demangle(mangled); }
};

class ElfSymbols {
 public:
  // A PT_LOAD segment: how file offsets map to virtual addresses.
  struct LoadSegment {
    uint64_t offset = 0;      // p_offset
    uint64_t filesz = 0;      // p_filesz
    uint64_t vaddr = 0;       // p_vaddr
    uint64_t memsz = 0;       // p_memsz
    bool executable = false;  // PF_X
  };

  // Opens `path`; on failure the message names the path and the reason. A
  // valid ELF file without function symbols is not an error.
  static Result<ElfSymbols> Load(const std::string& path);
  // The same with the .symtab of `debug_path`, a separate debug file of
  // this binary, where it has one (its addresses are ours): the binary's
  // own table is then not read, only its PLT stubs, which a debug file
  // cannot describe (its .plt has no contents). A debug file of another
  // build (both have build-ids, and they differ) is an error. An empty
  // `debug_path` is Load(path).
  static Result<ElfSymbols> Load(const std::string& path, const std::string& debug_path);
  // The variables (STT_OBJECT) as well as the functions, for naming data
  // addresses (perf's symbol_daddr); no PLT stubs.
  static Result<ElfSymbols> LoadWithObjects(const std::string& path);

  // A file offset (computed by the caller from an mmap as
  // ip - map_start + pgoff) translated to the ELF virtual address that
  // symbols use, via the PT_LOAD segment whose file range contains it;
  // nullopt if none does.
  std::optional<uint64_t> FileOffsetToVaddr(uint64_t file_offset) const;

  // The inverse: the file offset of ELF virtual address `vaddr`, via the
  // PT_LOAD segment whose file-backed part contains it (an executable
  // segment wins); nullopt if none does, e.g. for .bss. Uprobes are placed
  // by file offset.
  std::optional<uint64_t> VaddrToFileOffset(uint64_t vaddr) const;

  // The function containing `vaddr`, or nullptr. A symbol with a size covers
  // [start, start + size); one with size 0 covers up to the next symbol's
  // start, but not past the end of the executable segment it lies in (a
  // size-0 symbol outside every executable segment, with no symbol after it,
  // covers only its start address). `end`, when given, receives the end
  // (exclusive) of that extent.
  const ElfSymbol* Find(uint64_t vaddr, uint64_t* end = nullptr) const;

  // Lowercase hex of the NT_GNU_BUILD_ID note; empty if the file has none.
  const std::string& build_id() const { return build_id_; }
  // Sorted by start; one symbol per address.
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }
  // True if .symtab was used (false: .dynsym only).
  bool has_symtab() const { return has_symtab_; }
  // The PT_LOAD segments, in program header order.
  const std::vector<LoadSegment>& segments() const { return segments_; }
  // ET_EXEC: loaded at its own addresses (no load bias).
  bool fixed_address() const { return fixed_address_; }
  // A Go binary without .symtab: the function table its symbols came from
  // (with the files and lines of its pcs); nullptr otherwise.
  const GoPclntab* go_table() const { return go_table_.get(); }

  // Takes the .symtab functions of a separate debug file for this binary
  // (same build-id; its addresses are ours), keeping our own PLT stubs,
  // which a debug file cannot describe (its .plt has no contents).
  void MergeDebugSymbols(ElfSymbols debug);

 private:
  ElfSymbols() = default;
  static Result<ElfSymbols> LoadOwn(const std::string& path, bool objects);
  // Segments and build-id.
  static Result<ElfSymbols> ReadLayout(const std::string& path, const ElfFile& file);
  // Functions (and with `objects`, variables) of .symtab, else .dynsym.
  void ReadOwnSymbols(const ElfFile& file, bool objects);
  // Without .symtab: the functions of a Go binary's .gopclntab, added to
  // what .dynsym gave (a Go function wins at a shared address).
  void AddGoFunctions(const ElfFile& file);
  // The x86 PLT stubs of `file`, named by its relocations.
  void AddStubs(const ElfFile& file);
  // End (exclusive) of the executable segment containing `vaddr`, if any.
  std::optional<uint64_t> ExecutableSegmentEnd(uint64_t vaddr) const;

  std::vector<ElfSymbol> symbols_;
  // What the symbols' names point into; shared by copies, which keep the
  // same views.
  std::vector<std::shared_ptr<const std::string>> names_;
  std::vector<LoadSegment> segments_;
  std::string build_id_;
  std::shared_ptr<const GoPclntab> go_table_;
  bool has_symtab_ = false;
  bool fixed_address_ = false;
};

// A Go binary's function table (.gopclntab, a PIE's
// .data.rel.ro.gopclntab) with its inline trees where they are found (Go
// 1.18 and later); nullopt when `file` has none or it names no function.
std::optional<GoPclntab> ReadGoPclntab(const ElfFile& file);

}  // namespace sample
