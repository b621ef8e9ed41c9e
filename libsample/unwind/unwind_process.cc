#include "libsample/unwind/unwind_process.h"

#include <gelf.h>

#include <algorithm>
#include <cstring>

namespace sample::unwind_process {
namespace {

// How far past the end of the stack copy a read still counts as "the copy
// was too small" rather than a wild address: stacks are at most a few MiB.
constexpr uint64_t kStackReach = uint64_t{64} << 20;

bool ReadFromElf(Dwfl* dwfl, Dwarf_Addr addr, Dwarf_Word* result) {
  Dwfl_Module* module = dwfl_addrmodule(dwfl, addr);
  if (module == nullptr) return false;
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  if (elf == nullptr) return false;
  size_t raw_size = 0;
  const char* raw = elf_rawfile(elf, &raw_size);
  size_t count = 0;
  if (raw == nullptr || elf_getphdrnum(elf, &count) != 0) return false;
  const uint64_t vaddr = addr - bias;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    // Writable segments hold the file's initial data, not what the process
    // had there at the sample: reading them would mislead.
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD ||
        (phdr.p_flags & PF_W) != 0) {
      continue;
    }
    if (vaddr < phdr.p_vaddr || vaddr - phdr.p_vaddr + sizeof(*result) > phdr.p_filesz) continue;
    const uint64_t offset = phdr.p_offset + (vaddr - phdr.p_vaddr);
    if (offset > raw_size || raw_size - offset < sizeof(*result)) return false;
    std::memcpy(result, raw + offset, sizeof(*result));
    return true;
  }
  return false;
}

// libdw's step through a frame no CFI describes (x86_64_unwind in
// elfutils' backend): the return address at rbp + 8, the caller's rbp at
// rbp, its stack pointer rbp + 16; the other registers unknown. nullopt
// when it stepped, else why the walk ends.
std::optional<UnwindStop> FramePointerStep(Process* process, std::array<uint64_t, 7>& value,
                                           uint32_t& known, uint64_t& pc, uint64_t& sp) {
  const uint64_t rbp = value[X86FrameRule::kRbp];
  Dwarf_Word ret = 0;
  if (!MemoryRead(process->dwfl.get(), rbp + 8, &ret, process)) return process->memory_failure;
  Dwarf_Word caller_rbp = 0;
  if (!MemoryRead(process->dwfl.get(), rbp, &caller_rbp, process)) caller_rbp = 0;
  process->memory_failure = UnwindStop::kComplete;
  known = 1u << X86FrameRule::kRbp;
  value[X86FrameRule::kRbp] = caller_rbp;
  pc = ret;
  sp = rbp + 16;
  return std::nullopt;
}

}  // namespace

const UnwindModule* EmbeddedModuleAt(const Process& process, uint64_t pc) {
  for (const UnwindModule& module : process.embedded) {
    if (pc >= module.start && pc < module.end) return &module;
  }
  return nullptr;
}

PcHome HomeOf(Process* process, uint64_t pc) {
  if (dwfl_addrmodule(process->dwfl.get(), pc) != nullptr) return PcHome::kFile;
  if (EmbeddedModuleAt(*process, pc) != nullptr) return PcHome::kEmbedded;
  for (const auto& [start, end] : process->file_ranges) {
    if (pc >= start && pc < end) return PcHome::kFile;
  }
  return PcHome::kNone;
}

bool ReadStackCopy(const UnwindRequest& request, uint64_t addr, uint64_t word, uint64_t* value,
                   uint64_t* reach) {
  const uint64_t sp = request.regs.sp;
  const uint64_t size = request.stack.size();
  if (addr < sp || addr - sp > size || size - (addr - sp) < word) return false;
  *value = 0;
  std::memcpy(value, request.stack.data() + (addr - sp), word);
  *reach = std::max(*reach, addr - sp + word);
  return true;
}

bool BeyondStackCopy(const UnwindRequest& request, uint64_t addr) {
  const uint64_t sp = request.regs.sp;
  return addr >= sp && addr - sp < request.stack.size() + kStackReach;
}

bool MemoryRead(Dwfl* dwfl, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  auto* process = static_cast<Process*>(arg);
  const UnwindRequest& request = *process->request;
  // A 32-bit process's words are 4 bytes: libdw takes what is read here
  // whole (a CFA from DW_OP_deref, for one), so the rest must be zero.
  const bool i386 = request.regs.arch == Arch::kI386;
  uint64_t value = 0;
  if (ReadStackCopy(request, addr, i386 ? 4 : sizeof(*result), &value, &process->stack_reach)) {
    *result = value;
    return true;
  }
  if (ReadFromElf(dwfl, addr, result)) {
    if (i386) *result &= 0xffffffff;
    return true;
  }
  process->memory_failure =
      BeyondStackCopy(request, addr) ? UnwindStop::kStackTooSmall : UnwindStop::kBadMemory;
  return false;
}

// The rule for `pc` (a lookup pc: the caller's return address minus one),
// from .eh_frame, else .debug_frame, as libdw's unwinder looks them up; in
// a module without a file, from the rows the recording embedded (read from
// the same CFI the same way when it was recorded).
const CachedRule& RuleFor(Process* process, uint64_t pc) {
  auto [it, inserted] = process->rules.try_emplace(pc);
  if (!inserted) return it->second;
  Dwfl_Module* module = dwfl_addrmodule(process->dwfl.get(), pc);
  if (module == nullptr) {
    if (const UnwindModule* embedded = EmbeddedModuleAt(*process, pc)) {
      it->second.home = PcHome::kEmbedded;
      const CfiRow* row = embedded->embedded->CfiRowAt(pc - embedded->bias);
      // The recorder looked up a row for every pc a walk can reach (each is
      // a word of a stack copy, or a sampled pc): none means no CFI.
      if (row != nullptr) it->second.rule = row->rule;
      it->second.no_cfi = row == nullptr;
    }
    return it->second;
  }
  it->second.home = PcHome::kFile;
  it->second.no_cfi = true;
  for (int source = 0; source < 2; ++source) {
    Dwarf_Addr bias = 0;
    Dwarf_CFI* cfi =
        source == 0 ? dwfl_module_eh_cfi(module, &bias) : dwfl_module_dwarf_cfi(module, &bias);
    Dwarf_Frame* frame = nullptr;
    if (cfi == nullptr || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) continue;
    const std::unique_ptr<Dwarf_Frame, decltype(&free)> owned(frame, &free);  // malloc'd by libdw
    it->second.rule = ReadX86FrameRule(frame);
    it->second.no_cfi = false;
    break;
  }
  return it->second;
}

// Steps through a signal handler's return trampoline: the interrupted
// frame's registers from the ucontext at `sp` (x86_64's rt_sigframe once
// the handler's return popped its pretcode: uc_flags, uc_link, uc_stack,
// then the general registers of uc_mcontext, r8 first). nullopt when it
// stepped, else why the walk ends.
std::optional<UnwindStop> SignalFrameStep(Process* process, std::array<uint64_t, 7>& value,
                                          uint32_t& known, uint64_t& pc, uint64_t& sp) {
  constexpr uint64_t kGregs = 40;  // offsetof(ucontext_t, uc_mcontext.gregs)
  // Greg indexes: REG_R12..REG_R15 are 4..7, REG_RBP 10, REG_RBX 11,
  // REG_RSP 15, REG_RIP 16; in X86FrameRule::kDwarfRegs order (rbx, rbp,
  // r12..r15, the return address: the interrupted rip).
  constexpr std::array<uint64_t, 7> kGreg = {11, 10, 4, 5, 6, 7, 16};
  const uint64_t ucontext = sp;
  Dwarf_Word word = 0;
  if (!MemoryRead(process->dwfl.get(), ucontext + kGregs + 15 * 8, &word, process)) {
    return process->memory_failure;
  }
  const uint64_t interrupted_sp = word;
  known = 0;
  for (size_t i = 0; i < kGreg.size(); ++i) {
    if (MemoryRead(process->dwfl.get(), ucontext + kGregs + kGreg[i] * 8, &word, process)) {
      value[i] = word;
      known |= 1u << i;
    } else if (i == X86FrameRule::kReturnAddress) {
      return process->memory_failure;
    }
  }
  process->memory_failure = UnwindStop::kComplete;
  pc = value[X86FrameRule::kReturnAddress];
  sp = interrupted_sp;
  return std::nullopt;
}

CachedWalk WalkWithRules(Process* process, const UnwindRequest& request,
                         std::vector<uint64_t>* pcs) {
  using Kind = X86FrameRule::Kind;
  constexpr auto& kRegs = X86FrameRule::kDwarfRegs;
  const size_t first = pcs->size();
  std::array<uint64_t, kRegs.size()> value{};
  uint32_t known = 0;
  for (size_t i = 0; i < kRegs.size(); ++i) {
    if (kRegs[i] != 16 && request.regs.Has(kRegs[i])) {
      value[i] = request.regs.value[kRegs[i]];
      known |= 1u << i;
    }
  }
  uint64_t pc = request.regs.pc;
  uint64_t sp = request.regs.sp;
  pcs->push_back(pc);
  CachedWalk walk;
  // Each caller's frame lies above its callee's (the stack grows down): a
  // step that does not climb is a loop (a frame pointer saved as itself,
  // as a JIT's deoptimization frames were seen to), which would repeat to
  // the frame limit.
  // (A signal frame's step may go down: a handler on its own stack,
  // sigaltstack, interrupted code on another.)
  uint64_t last_sp = 0;
  // The pc is where its frame was interrupted (the sample's, or the one a
  // signal frame saved), not a return address.
  bool exact = true;
  for (bool innermost = true;; innermost = false) {
    if (pcs->size() - first >= request.max_frames) return {UnwindStop::kMaxDepth};
    if (!innermost && sp <= last_sp) {
      pcs->pop_back();  // the frame the looping step gave
      return {UnwindStop::kLoop};
    }
    last_sp = sp;
    // A caller's pc is a return address: its call is at pc - 1.
    const CachedRule& cached = RuleFor(process, exact ? pc : pc - 1);
    exact = false;
    const X86FrameRule& rule = cached.rule;
    const bool rbp_known = (known >> X86FrameRule::kRbp & 1) != 0;
    const bool rbx_known = (known >> X86FrameRule::kRbx & 1) != 0;
    if (cached.no_cfi) {
      // Done here whether the module is a file or embedded, so both give
      // the same walk.
      walk.embedded |= cached.home == PcHome::kEmbedded;
      if (!rbp_known || value[X86FrameRule::kRbp] == 0) return {UnwindStop::kNoCfi};
      if (auto stop = FramePointerStep(process, value, known, pc, sp)) return {*stop};
      if (pc == 0) return {UnwindStop::kComplete};
      pcs->push_back(pc);
      continue;
    }
    if (rule.usable && rule.signal_frame) {
      walk.embedded |= cached.home == PcHome::kEmbedded;
      if (auto stop = SignalFrameStep(process, value, known, pc, sp)) return {*stop};
      if (pc == 0) return {UnwindStop::kComplete};
      pcs->push_back(pc);
      exact = true;
      last_sp = 0;
      continue;
    }
    if (!rule.usable || (rule.cfa_base == X86FrameRule::CfaBase::kRbp && !rbp_known) ||
        (rule.cfa_base == X86FrameRule::CfaBase::kRbx && !rbx_known) ||
        rule.kind[X86FrameRule::kReturnAddress] == Kind::kSame) {
      walk.gave_up_in = cached.home;
      return walk;
    }
    walk.embedded |= cached.home == PcHome::kEmbedded;
    if (rule.kind[X86FrameRule::kReturnAddress] == Kind::kUndefined) {
      return {UnwindStop::kComplete};
    }
    const uint64_t cfa = X86Cfa(rule, pc, sp, value[X86FrameRule::kRbp], value[X86FrameRule::kRbx]);
    for (size_t i = 0; i < kRegs.size(); ++i) {
      if (rule.kind[i] == Kind::kUndefined) {
        known &= ~(1u << i);
      } else if (rule.kind[i] == Kind::kAtCfa) {
        Dwarf_Word word;
        const bool read = MemoryRead(process->dwfl.get(),
                                     cfa + static_cast<uint64_t>(rule.offset[i]), &word, process);
        if (!read && i == X86FrameRule::kReturnAddress) return {process->memory_failure};
        if (read) {
          value[i] = word;
          known |= 1u << i;
        } else {
          known &= ~(1u << i);
        }
      }
    }
    process->memory_failure = UnwindStop::kComplete;  // a lost saved register is no failure
    pc = value[X86FrameRule::kReturnAddress];
    sp = cfa;  // x86_64: the caller's stack pointer is the CFA
    if (pc == 0) return {UnwindStop::kComplete};
    pcs->push_back(pc);
  }
}

}  // namespace sample::unwind_process
