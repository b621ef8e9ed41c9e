#include "libsample/symbols/x86_frame_rule.h"

#include <dwarf.h>

namespace sample {
namespace {

// GNU ld's CFA expression for .plt entries (x86_64, lazy binding):
// DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
// DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus.
bool IsPltCfa(const Dwarf_Op* ops, size_t nops) {
  static constexpr uint8_t kAtoms[] = {DW_OP_breg7, DW_OP_breg16, DW_OP_lit15,
                                       DW_OP_and,   DW_OP_lit11,  DW_OP_ge,
                                       DW_OP_lit3,  DW_OP_shl,    DW_OP_plus};
  if (nops != sizeof(kAtoms)) return false;
  for (size_t i = 0; i < nops; ++i) {
    if (ops[i].atom != kAtoms[i]) return false;
  }
  return ops[1].number == 0;
}

}  // namespace

X86FrameRule ReadX86FrameRule(Dwarf_Frame* frame) {
  X86FrameRule rule;
  bool signal_frame = false;
  // The return address column is 16 in x86_64 CFI; anything else is not
  // what the cached walk knows how to step.
  if (dwarf_frame_info(frame, nullptr, nullptr, &signal_frame) != 16) return rule;
  if (signal_frame) {
    // Its CFA and registers are expressions over the ucontext; the walk
    // reads the ucontext itself.
    rule.usable = true;
    rule.signal_frame = true;
    return rule;
  }
  // CFA: DW_CFA_def_cfa reg, offset comes back as one DW_OP_bregx.
  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_cfa(frame, &ops, &nops) != 0) return rule;
  if (IsPltCfa(ops, nops)) {
    rule.cfa_plt = true;
    rule.cfa_offset = static_cast<int64_t>(ops[0].number);  // DW_OP_breg7's offset
  } else if (nops == 1 && ops[0].atom == DW_OP_bregx &&
             (ops[0].number == 7 || ops[0].number == 6 || ops[0].number == 3)) {
    rule.cfa_base = ops[0].number == 6   ? X86FrameRule::CfaBase::kRbp
                    : ops[0].number == 3 ? X86FrameRule::CfaBase::kRbx
                                         : X86FrameRule::CfaBase::kRsp;
    rule.cfa_offset = static_cast<int64_t>(ops[0].number2);
  } else {
    return rule;
  }
  for (size_t i = 0; i < X86FrameRule::kDwarfRegs.size(); ++i) {
    Dwarf_Op ops_mem[3];
    Dwarf_Op* reg_ops = nullptr;
    size_t reg_nops = 0;
    if (dwarf_frame_register(frame, X86FrameRule::kDwarfRegs[i], ops_mem, &reg_ops, &reg_nops) !=
        0) {
      return rule;
    }
    if (reg_nops == 0) {
      // libdw: ops == ops_mem means "undefined", a null pointer "same value".
      rule.kind[i] =
          reg_ops == nullptr ? X86FrameRule::Kind::kSame : X86FrameRule::Kind::kUndefined;
      continue;
    }
    // offset(N): DW_OP_call_frame_cfa, then DW_OP_plus_uconst N unless N is 0.
    if (reg_ops[0].atom != DW_OP_call_frame_cfa) return rule;
    if (reg_nops == 1) {
      rule.offset[i] = 0;
    } else if (reg_nops == 2 && reg_ops[1].atom == DW_OP_plus_uconst) {
      rule.offset[i] = static_cast<int64_t>(reg_ops[1].number);  // wraps for negative offsets
    } else {
      return rule;  // val_offset (a value, not a location) or an expression
    }
    rule.kind[i] = X86FrameRule::Kind::kAtCfa;
  }
  rule.usable = true;
  return rule;
}

}  // namespace sample
