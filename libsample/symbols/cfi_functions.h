// CfiFunctions: where the functions of a binary start, from its call-frame
// information, for code no symbol names.
//
// A stripped library (Debian's liblzma ships without a symbol table for its
// internal functions) still has an .eh_frame FDE for every function: the
// unwinder needs it. An FDE's address range is, in practice, one function,
// so addresses that share an FDE are one function, and the FDE's start
// names it ("liblzma.so.5.4.1+0x15b40") instead of one row per sampled
// address. Owns the ELF file and libdw's CFI of it; opened on first use.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "libsample/result.h"

namespace sample {

// The addresses [start, end) of one function as CFI delimits it.
struct CfiRange {
  uint64_t start = 0;
  uint64_t end = 0;
};

// The row of `cfi` that holds `vaddr`: [start, end) as libdw delimits it
// (after DW_CFA_restore_state libdw's start can be rows early: CfiRows
// finds the true one); nullopt when no FDE covers `vaddr`.
std::optional<CfiRange> CfiRowRange(Dwarf_CFI* cfi, uint64_t vaddr);

class CfiFunctions {
 public:
  // `path`'s .eh_frame (else .debug_frame); an error when it has neither.
  static Result<CfiFunctions> Open(const std::string& path);
  CfiFunctions(CfiFunctions&&) noexcept;
  CfiFunctions& operator=(CfiFunctions&&) noexcept;
  ~CfiFunctions();

  // The start (ELF virtual address) of the FDE that covers `vaddr`, or
  // nullopt when none does. With `same`: addresses around `vaddr` whose
  // StartOf is this one too (its row's, within the FDE's start from
  // .eh_frame_hdr's table and the next; else `vaddr` alone), so that a
  // caller asking byte after byte (KnownFrames::Learn) asks libdw once a
  // row, not once a byte (each replays the FDE's instructions).
  std::optional<uint64_t> StartOf(uint64_t vaddr, CfiRange* same = nullptr) const;
  // The whole FDE that covers `vaddr`: from StartOf(vaddr) to where the
  // FDE's last row ends (at or before the next FDE of .eh_frame_hdr's
  // table). Without that table StartOf knows only the row, and so does
  // this: the row's range. Costs a few tens of row lookups (RangeOf's
  // comment says why not one per row).
  std::optional<CfiRange> RangeOf(uint64_t vaddr) const;

 private:
  struct State;
  explicit CfiFunctions(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace sample
