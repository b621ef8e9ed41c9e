// X86FrameRule: the CFI of one x86_64 pc, reduced to the few forms
// compilers emit, so an unwinder can step a frame with a table lookup and
// a couple of memory reads instead of libdw's general machinery.
//
// libdw (dwarf_cfi_addrframe) still parses the CFI; this only keeps its
// answer. A frame whose rules are anything else (DWARF expressions,
// register-to-register rules, signal frames) is marked not `usable` and
// the caller falls back to libdw for the whole walk. Measured on a
// qsort-through-libc workload: libdw's per-frame state machine and its
// allocations were 60% of a report's time; a cached rule is a hash lookup.
#pragma once

#include <elfutils/libdw.h>

#include <array>
#include <cstdint>

namespace sample {

struct X86FrameRule {
  // The registers a caller's frame needs: the callee-saved ones CFI may
  // restore, and the return address column.
  static constexpr std::array<int, 7> kDwarfRegs = {
      3 /* rbx */, 6 /* rbp */, 12, 13, 14, 15, 16 /* return address */};
  static constexpr size_t kRbp = 1;
  static constexpr size_t kReturnAddress = 6;

  enum class Kind : uint8_t {
    kSame,       // unchanged in the caller
    kUndefined,  // not recoverable (for the return address: outermost frame)
    kAtCfa,      // saved in memory at CFA + offset
  };

  bool usable = false;
  bool cfa_from_rbp = false;  // CFA = rbp + cfa_offset, else rsp + cfa_offset
  int64_t cfa_offset = 0;
  std::array<Kind, kDwarfRegs.size()> kind{};
  std::array<int64_t, kDwarfRegs.size()> offset{};
};

// Reads the rules of `frame` (from dwarf_cfi_addrframe).
X86FrameRule ReadX86FrameRule(Dwarf_Frame* frame);

}  // namespace sample
