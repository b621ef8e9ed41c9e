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
  static constexpr size_t kRbx = 0;
  static constexpr size_t kRbp = 1;
  static constexpr size_t kReturnAddress = 6;

  enum class Kind : uint8_t {
    kSame,       // unchanged in the caller
    kUndefined,  // not recoverable (for the return address: outermost frame)
    kAtCfa,      // saved in memory at CFA + offset
  };

  // The register the CFA is an offset from: rsp; rbp, a frame pointer's
  // frame; rbx, a frame that realigned its stack and kept the unaligned
  // rsp there (glibc's _dl_runtime_resolve_xsavec, lazy binding's resolver).
  enum class CfaBase : uint8_t { kRsp, kRbp, kRbx };

  bool usable = false;
  CfaBase cfa_base = CfaBase::kRsp;  // CFA = that register + cfa_offset
  int64_t cfa_offset = 0;
  // A lazy-binding PLT stub's CFA, which GNU ld describes with an
  // expression: rsp + cfa_offset, plus 8 once the stub has pushed its
  // relocation index (from byte 11 of its 16: (pc & 15) >= 11).
  bool cfa_plt = false;
  // A signal handler's return trampoline (its CFI says 'S'; glibc's
  // __restore_rt): the interrupted frame's registers are in the ucontext
  // the stack pointer points at (x86_64's rt_sigframe, past the popped
  // return address), not in rules of this row; the other fields are unset.
  bool signal_frame = false;
  std::array<Kind, kDwarfRegs.size()> kind{};
  std::array<int64_t, kDwarfRegs.size()> offset{};
};

// Reads the rules of `frame` (from dwarf_cfi_addrframe).
X86FrameRule ReadX86FrameRule(Dwarf_Frame* frame);

// The CFA of a frame at `pc` whose rsp, rbp and rbx are given.
inline uint64_t X86Cfa(const X86FrameRule& rule, uint64_t pc, uint64_t rsp, uint64_t rbp,
                       uint64_t rbx) {
  using Base = X86FrameRule::CfaBase;
  const uint64_t base = rule.cfa_base == Base::kRbp ? rbp : rule.cfa_base == Base::kRbx ? rbx : rsp;
  const uint64_t plt = rule.cfa_plt && (pc & 15) >= 11 ? 8 : 0;
  return base + static_cast<uint64_t>(rule.cfa_offset) + plt;
}

}  // namespace sample
