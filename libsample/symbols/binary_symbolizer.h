// BinarySymbolizer: addresses of one binary -> functions, inline chains and
// source lines.
//
// Opened on an ELF file and, optionally, a separate debug file for it (same
// build-id; DebugFileFinder finds one). Function names come from DWARF
// (DwarfNames: the demangled linkage name, else DW_AT_name qualified by its
// scopes, for inlined calls as for the functions holding them) and, where
// DWARF says nothing, from the ELF symbols: .symtab (the debug file's if the
// binary has none), else .dynsym and a Go binary's .gopclntab (which gives
// lines and inlined calls too), and `name@plt` for PLT stubs (ElfSymbols).
// Inlined calls become frames of their own. C++ and Rust names are demangled.
//
// Cost: Open reads the ELF symbols and the DWARF unit address table (no DIE
// trees). A unit's DIE tree and line table are indexed on the unit's first
// lookup (DwarfUnitIndex) and kept, so later lookups in it are binary
// searches; units never looked up cost nothing.
//
// Owns the DWARF file (fd, Elf*, Dwarf*) and the per-unit indexes.
// Move-only. Thread-safety: lookups fill caches and libdw is not thread-safe,
// so one BinarySymbolizer must be used by one thread at a time. Distinct
// BinarySymbolizers (even of the same file) may be used on different threads
// concurrently; they share nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libsample/result.h"
#include "libsample/symbols/cfi_functions.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample {

// Where a frame's function name came from.
enum class NameSource {
  kNone,       // nothing names the address
  kDwarf,      // DW_TAG_subprogram / DW_TAG_inlined_subroutine
  kSymtab,     // .symtab (the binary's or its debug file's)
  kDynsym,     // .dynsym only
  kPlt,        // a synthesised name@plt stub
  kGoPclntab,  // a Go binary's runtime function table (no .symtab)
};

// One frame of a symbolized address. A lookup gives a list, innermost first:
// the inlined calls (inlined = true), then the real function.
struct SymbolFrame {
  std::string function;  // demangled; empty if nothing names the address
  std::string file;      // source file as DWARF records it (usually absolute); may be empty
  uint32_t line = 0;     // 0: unknown
  bool inlined = false;  // this frame is an inlined call inside the next frame
  NameSource name_source = NameSource::kNone;

  // "file:line", or "" without a file or line. Printers shorten the path.
  std::string srcline() const;
};

class BinarySymbolizer {
 public:
  // `binary_path` is the ELF file that was mapped (its program headers place
  // file offsets and its PLT gives the stubs); `debug_path`, if not empty, a
  // separate debug file for it, whose DWARF and .symtab are then used. DWARF
  // comes from the debug file if it has some, else from the binary. Fails
  // only if `binary_path` (or a given `debug_path`) cannot be read as ELF;
  // a file without DWARF just gives frames without inline calls and lines.
  // With DwarfUse::kSkip the DWARF is not opened (frames come from the ELF
  // symbols alone): for callers that need the symbols and CFI only.
  enum class DwarfUse { kRead, kSkip };
  static Result<BinarySymbolizer> Open(const std::string& binary_path,
                                       const std::string& debug_path = "",
                                       DwarfUse dwarf_use = DwarfUse::kRead);

  // Opens the DWARF of a symbolizer opened with DwarfUse::kSkip, as kRead
  // would have (the ELF symbols are not read again); nothing after the
  // first call.
  void ReadDwarf();

  BinarySymbolizer(BinarySymbolizer&&) noexcept;
  BinarySymbolizer& operator=(BinarySymbolizer&&) noexcept;
  ~BinarySymbolizer();

  // Frames for a file offset in the binary (ip - map_start + pgoff for a
  // mapping); empty if no PT_LOAD segment holds it or nothing is known
  // about it. Callers pass `pc - 1` for return addresses.
  std::vector<SymbolFrame> SymbolizeFileOffset(uint64_t file_offset);
  // Frames for an ELF virtual address (as symbols and DWARF use).
  std::vector<SymbolFrame> SymbolizeVaddr(uint64_t vaddr);

  // For an address no symbol or DWARF names: the start of the function
  // that holds it, as the binary's call-frame information delimits it
  // (cfi_functions.h); nullopt when no FDE covers it. Reads the CFI on
  // first use.
  std::optional<uint64_t> CfiFunctionStart(uint64_t vaddr);
  // The whole of that function, [CfiFunctionStart, end) (CfiFunctions::RangeOf).
  std::optional<CfiRange> CfiFunctionRange(uint64_t vaddr);

  // What FramesAtFileOffset(file_offset) is made of, but for the offset's
  // distance from its function's start: the segment placing it, the DWARF
  // unit, line row and inline scope holding it, the ELF symbol and the
  // FDE (and a stripped Go function's pc-value tables' values). Two offsets of equal keys
  // have the same frames but for symbol offsets, which differ as the offsets do (KnownFrames::Learn
  // relies on it to look up only where a key changes).
  struct LookupKey {
    std::optional<uint64_t> bias;  // vaddr - file offset
    const void* unit = nullptr;
    int64_t row = -1;
    int32_t scope = -1;
    const void* symbol = nullptr;
    std::optional<uint64_t> fde_start;
    GoPclntab::PcKey go;  // a Go function's file, line and inline index (.gopclntab)
    bool operator==(const LookupKey&) const = default;
  };
  LookupKey KeyAtFileOffset(uint64_t file_offset);

  // The address ranges ([lo, hi) ELF virtual addresses) of the
  // compilation unit holding `vaddr` (a source file's code: the functions
  // near a looked-up one), sorted; empty without DWARF or such a unit.
  std::vector<std::pair<uint64_t, uint64_t>> UnitRangesAt(uint64_t vaddr);

  const ElfSymbols& elf_symbols() const;
  // The demangled name of `symbol`, one of elf_symbols(); the reference
  // holds until the next call. Names are kept in 256 slots by symbol (a
  // report asks for each address of a function, in address order).
  const std::string& SymbolName(const ElfSymbol& symbol);
  // The file whose DWARF is used; empty if neither file has DWARF.
  const std::string& dwarf_path() const;
  // That file as opened (for its owner and mode: fstat), or -1.
  int dwarf_fd() const;
  // Why no DWARF is used (e.g. "<path>: no DWARF"); empty if DWARF is used.
  const std::string& dwarf_error() const;
  // Units that may be compilation units (version 5 DW_UT_compile headers,
  // and every unit of an earlier version: their top DIEs' tags are read
  // only as they are looked up), and how many were indexed so far.
  size_t unit_count() const;
  size_t indexed_unit_count() const;

 private:
  struct State;
  explicit BinarySymbolizer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace sample
