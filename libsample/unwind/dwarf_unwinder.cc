#include "libsample/unwind/dwarf_unwinder.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "libsample/regular_file.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/x86_frame_rule.h"

namespace sample {
namespace {

// How far past the end of the stack copy a read still counts as "the copy
// was too small" rather than a wild address: stacks are at most a few MiB.
constexpr uint64_t kStackReach = uint64_t{64} << 20;

struct DwflDeleter {
  void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
};
using DwflPtr = std::unique_ptr<Dwfl, DwflDeleter>;

// Modules are reported with their ELF files; libdwfl never has to find one.
int NoElf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) { return -1; }

// .debug_frame lives in the separate debug file the report already found
// (build-id checked); the module's userdata points at its UnwindModule.
int FindDebugFile(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*, const char*,
                  GElf_Word, char** debuginfo_file_name) {
  const auto* module = static_cast<const UnwindModule*>(*userdata);
  if (module == nullptr || module->debug.empty()) return -1;
  auto fd = OpenRegularFile(module->debug);  // never a FIFO or device
  if (!fd) return -1;
  *debuginfo_file_name = strdup(module->debug.c_str());
  return fd->Release();
}

const Dwfl_Callbacks kDwflCallbacks = {
    .find_elf = NoElf,
    .find_debuginfo = FindDebugFile,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

// Where a pc lies: in a file libdw reads, in a module known only by what
// the recording embedded, or in no module.
enum class PcHome : uint8_t { kNone, kFile, kEmbedded };

// The x86_64 rule of a lookup pc and where it came from.
struct CachedRule {
  X86FrameRule rule;  // not usable when nothing holds a rule for the pc
  PcHome home = PcHome::kNone;
  // The pc is in a module, but no CFI covers it (code without an FDE, as
  // crt's _init and _fini): a frame-pointer step, as libdw's would be.
  bool no_cfi = false;
};

}  // namespace

struct DwarfUnwinder::Process {
  // Modules reported, by (start, binary), with the copy their userdata
  // points at (declared first: the Dwfl goes first).
  std::map<std::pair<uint64_t, std::string>, std::unique_ptr<UnwindModule>> reported;
  DwflPtr dwfl;
  uint64_t version = 0;
  bool attached = false;
  // The sample being unwound, and what went wrong reading its memory.
  const UnwindRequest* request = nullptr;
  UnwindStop memory_failure = UnwindStop::kComplete;
  uint64_t stack_reach = 0;  // bytes of the copy from sp that reads reached
  std::vector<uint64_t>* pcs = nullptr;
  size_t first_pc = 0;  // where this walk's frames start in *pcs
  bool hit_max_depth = false;
  bool hit_embedded = false;  // libdw's walk reached an embedded module
  uint64_t last_use = 0;
  // The space's modules without a file (their CFI embedded in the
  // recording), which libdw does not know.
  std::vector<UnwindModule> embedded;
  // x86_64 CFI rules by lookup pc, for the fast path; cleared when the
  // modules change.
  std::unordered_map<uint64_t, CachedRule> rules;

  // The cached walk can run with embedded modules alone; libdw's needs a
  // file to attach with.
  bool usable() const { return attached || !embedded.empty(); }
};

namespace {

using Process = DwarfUnwinder::Process;

const UnwindModule* EmbeddedModuleAt(const Process& process, uint64_t pc) {
  for (const UnwindModule& module : process.embedded) {
    if (pc >= module.start && pc < module.end) return &module;
  }
  return nullptr;
}

PcHome HomeOf(Process* process, uint64_t pc) {
  if (dwfl_addrmodule(process->dwfl.get(), pc) != nullptr) return PcHome::kFile;
  return EmbeddedModuleAt(*process, pc) != nullptr ? PcHome::kEmbedded : PcHome::kNone;
}

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

bool MemoryRead(Dwfl* dwfl, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  auto* process = static_cast<Process*>(arg);
  const UnwindRequest& request = *process->request;
  const uint64_t sp = request.regs.sp;
  const uint64_t size = request.stack.size();
  // A 32-bit process's words are 4 bytes: libdw takes what is read here
  // whole (a CFA from DW_OP_deref, for one), so the rest must be zero.
  const bool i386 = request.regs.arch == Arch::kI386;
  const uint64_t word = i386 ? 4 : sizeof(*result);
  if (addr >= sp && addr - sp <= size && size - (addr - sp) >= word) {
    *result = 0;
    std::memcpy(result, request.stack.data() + (addr - sp), word);
    process->stack_reach = std::max(process->stack_reach, addr - sp + word);
    return true;
  }
  if (ReadFromElf(dwfl, addr, result)) {
    if (i386) *result &= 0xffffffff;
    return true;
  }
  process->memory_failure = addr >= sp && addr - sp < size + kStackReach
                                ? UnwindStop::kStackTooSmall
                                : UnwindStop::kBadMemory;
  return false;
}

pid_t NextThread(Dwfl*, void*, void**) { return 0; }

bool GetThread(Dwfl*, pid_t, void* arg, void** thread_arg) {
  *thread_arg = arg;
  return true;
}

bool SetInitialRegisters(Dwfl_Thread* thread, void* arg) {
  const DwarfRegisters& regs = static_cast<Process*>(arg)->request->regs;
  // One call per run of consecutive registers the sample holds; the rest
  // stay undefined, so CFI that needs them fails instead of reading junk.
  for (size_t first = 0; first < regs.count;) {
    if (!regs.Has(first)) {
      ++first;
      continue;
    }
    size_t end = first;
    while (end < regs.count && regs.Has(end)) ++end;
    static_assert(sizeof(Dwarf_Word) == sizeof(uint64_t));
    if (!dwfl_thread_state_registers(thread, static_cast<int>(first),
                                     static_cast<unsigned>(end - first),
                                     reinterpret_cast<const Dwarf_Word*>(&regs.value[first]))) {
      return false;
    }
    first = end;
  }
  dwfl_thread_state_register_pc(thread, regs.pc);
  return true;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    .next_thread = NextThread,
    .get_thread = GetThread,
    .memory_read = MemoryRead,
    .set_initial_registers = SetInitialRegisters,
    .detach = nullptr,
    .thread_detach = nullptr,
};

int OnFrame(Dwfl_Frame* frame, void* arg) {
  auto* process = static_cast<Process*>(arg);
  Dwarf_Addr pc = 0;
  if (!dwfl_frame_pc(frame, &pc, nullptr)) return DWARF_CB_ABORT;
  // A zero return address is how some outermost frames end.
  const size_t found = process->pcs->size() - process->first_pc;
  if (pc == 0 && found != 0) return DWARF_CB_ABORT;
  process->pcs->push_back(pc);
  if (found + 1 >= process->request->max_frames) {
    process->hit_max_depth = true;
    return DWARF_CB_ABORT;
  }
  // libdw knows no CFI of an embedded module: it would step the frame by
  // its frame pointer, where the file's CFI would have been followed.
  if (!process->embedded.empty() && HomeOf(process, pc) == PcHome::kEmbedded) {
    process->hit_embedded = true;
    return DWARF_CB_ABORT;
  }
  return DWARF_CB_OK;
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

// How a walk with cached rules went.
struct CachedWalk {
  // nullopt: some frame needs more than the rules hold (libdw's walk);
  // `pcs` then ends with that frame.
  std::optional<UnwindStop> stop;
  PcHome gave_up_in = PcHome::kNone;  // where that frame's pc is
  bool embedded = false;              // a frame it stepped was in an embedded module
};

// Walks an x86_64 stack with cached rules.
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
  for (bool innermost = true;; innermost = false) {
    if (pcs->size() - first >= request.max_frames) return {UnwindStop::kMaxDepth};
    // A caller's pc is a return address: its call is at pc - 1.
    const CachedRule& cached = RuleFor(process, innermost ? pc : pc - 1);
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

}  // namespace

const char* UnwindStopName(UnwindStop stop) {
  switch (stop) {
    case UnwindStop::kComplete:
      return "complete";
    case UnwindStop::kStackTooSmall:
      return "stack copy too small";
    case UnwindStop::kNoCfi:
      return "no CFI";
    case UnwindStop::kNoModule:
      return "pc outside mapped files";
    case UnwindStop::kBadMemory:
      return "bad memory read";
    case UnwindStop::kMaxDepth:
      return "frame limit";
    case UnwindStop::kNoRegisters:
      return "no user registers";
    case UnwindStop::kFailed:
      return "other";
  }
  return "other";
}

DwarfUnwinder::DwarfUnwinder(bool use_rule_cache) : use_rule_cache_(use_rule_cache) {}
DwarfUnwinder::~DwarfUnwinder() = default;
DwarfUnwinder::DwarfUnwinder(DwarfUnwinder&&) noexcept = default;
DwarfUnwinder& DwarfUnwinder::operator=(DwarfUnwinder&&) noexcept = default;

DwarfUnwinder::Process* DwarfUnwinder::ProcessFor(const UnwindRequest& request) {
  if (!processes_.contains(request.pid) && processes_.size() >= kMaxProcesses) {
    auto oldest = std::min_element(processes_.begin(), processes_.end(), [](auto& a, auto& b) {
      return a.second->last_use < b.second->last_use;
    });
    processes_.erase(oldest);
  }
  std::unique_ptr<Process>& slot = processes_[request.pid];
  if (slot) slot->last_use = ++uses_;
  if (slot && slot->version == request.space->version) return slot->usable() ? slot.get() : nullptr;
  const std::vector<UnwindModule>& modules = request.space->modules;
  // Mappings mostly only grow (libraries loading): then the new modules
  // are added to the Dwfl and the CFI already parsed stays. Any module gone
  // or moved (munmap, exec) means a fresh Dwfl: libdw re-reporting through
  // dwfl_report_begin after dwfl_attach_state loses the modules' CFI
  // (measured: every later unwind fell back to frame pointers).
  if (slot) {
    for (const auto& entry : slot->reported) {
      // (Not a structured binding: clang 14, the fuzzers' compiler, cannot
      // capture one in a lambda.)
      const auto& key = entry.first;
      const bool kept = std::any_of(modules.begin(), modules.end(), [&](const UnwindModule& m) {
        return m.start == key.first && m.binary == key.second;
      });
      if (!kept) {
        slot.reset();
        break;
      }
    }
  }
  if (!slot) {
    slot = std::make_unique<Process>();
    slot->last_use = ++uses_;
    slot->dwfl.reset(dwfl_begin(&kDwflCallbacks));
    if (!slot->dwfl) {
      processes_.erase(request.pid);
      return nullptr;
    }
  }
  Process* process = slot.get();
  Dwfl* dwfl = process->dwfl.get();
  dwfl_report_begin_add(dwfl);
  process->embedded.clear();
  for (const UnwindModule& module : modules) {
    if (module.binary.empty()) {
      if (module.embedded != nullptr) process->embedded.push_back(module);
      continue;
    }
    auto [it, inserted] = process->reported.try_emplace({module.start, module.binary});
    if (!inserted) {
      it->second->debug = module.debug;
      continue;
    }
    // add_p_vaddr: `bias` is added to the segments' vaddrs (for ET_DYN;
    // ET_EXEC files sit at their own addresses).
    // Our own descriptor (libdwfl takes it over): given -1, libdwfl would
    // open the path itself, blocking on a FIFO planted there.
    auto fd = OpenRegularFile(module.binary);
    Dwfl_Module* reported = fd ? dwfl_report_elf(dwfl, module.binary.c_str(), module.binary.c_str(),
                                                 fd->get(), module.bias, true)
                               : nullptr;
    if (reported != nullptr) fd->Release();
    // The debug file's path must outlive the space that named it.
    it->second = std::make_unique<UnwindModule>(module);
    if (reported == nullptr) continue;
    void** userdata = nullptr;
    dwfl_module_info(reported, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (userdata != nullptr) *userdata = it->second.get();
  }
  dwfl_report_end(dwfl, nullptr, nullptr);
  process->version = request.space->version;
  process->rules.clear();  // a pc in no module may be in a new one
  if (!process->attached) {
    // The architecture comes from the reported modules' ELF headers, so a
    // recording from another architecture unwinds with its own backend.
    process->attached = dwfl_attach_state(dwfl, nullptr, static_cast<pid_t>(request.pid),
                                          &kThreadCallbacks, process);
  }
  return process->usable() ? process : nullptr;
}

UnwindStop DwarfUnwinder::Unwind(const UnwindRequest& request, std::vector<uint64_t>* pcs) {
  last_stack_reach_ = 0;
  if (request.space == nullptr || request.regs.count == 0) return UnwindStop::kNoRegisters;
  Process* process = ProcessFor(request);
  if (process == nullptr) {
    pcs->push_back(request.regs.pc);
    return UnwindStop::kNoModule;
  }
  process->stack_reach = 0;
  const UnwindStop stop = Walk(process, request, pcs);
  last_stack_reach_ = process->stack_reach;
  return stop;
}

UnwindStop DwarfUnwinder::Walk(Process* process, const UnwindRequest& request,
                               std::vector<uint64_t>* pcs) {
  const size_t first = pcs->size();
  process->request = &request;
  process->memory_failure = UnwindStop::kComplete;
  if (use_rule_cache_ && request.regs.arch == Arch::kX86_64) {
    const CachedWalk walk = WalkWithRules(process, request, pcs);
    // libdw's walk would start over and meet the embedded modules the
    // rules stepped (or the one they could not), without their CFI; or it
    // has no file to attach with.
    const bool no_libdw =
        walk.embedded || walk.gave_up_in == PcHome::kEmbedded || !process->attached;
    if (walk.stop || no_libdw) {
      process->request = nullptr;
      ++counts_.cached_walks;
      if (walk.stop) return *walk.stop;
      ++counts_.embedded_cut_walks;  // ends at the frame the rules could not step
      return walk.gave_up_in == PcHome::kNone ? UnwindStop::kNoModule : UnwindStop::kNoCfi;
    }
    pcs->resize(first);
    process->memory_failure = UnwindStop::kComplete;
  }
  if (!process->attached) {
    // Embedded modules only, and no cached walk (i386, or the cache off).
    process->request = nullptr;
    pcs->push_back(request.regs.pc);
    ++counts_.embedded_cut_walks;
    return HomeOf(process, request.regs.pc) == PcHome::kNone ? UnwindStop::kNoModule
                                                             : UnwindStop::kNoCfi;
  }
  ++counts_.libdw_walks;
  process->pcs = pcs;
  process->first_pc = first;
  process->hit_max_depth = false;
  process->hit_embedded = false;
  const int rc =
      dwfl_getthread_frames(process->dwfl.get(), static_cast<pid_t>(request.tid), OnFrame, process);
  process->request = nullptr;
  process->pcs = nullptr;
  if (pcs->size() == first) pcs->push_back(request.regs.pc);
  if (process->hit_max_depth) return UnwindStop::kMaxDepth;
  if (process->hit_embedded) {
    ++counts_.embedded_cut_walks;
    return UnwindStop::kNoCfi;
  }
  // libdw ends the walk quietly (rc 0) when a memory read fails: our
  // callback's note is the only record of it.
  if (process->memory_failure != UnwindStop::kComplete) return process->memory_failure;
  if (rc == 0) return UnwindStop::kComplete;
  // libdw could not step past the last frame found: tell a pc in no module
  // from one whose module has no CFI (nor a frame pointer to follow).
  const uint64_t last = pcs->back();
  if (HomeOf(process, last) == PcHome::kNone) return UnwindStop::kNoModule;
  if (rc == DWARF_CB_ABORT) return UnwindStop::kComplete;  // a zero return address
  return UnwindStop::kNoCfi;
}

FramelessCallers DwarfUnwinder::SkippedCallers(const UnwindRequest& request,
                                               uint64_t chained_caller, size_t max_steps) {
  using Kind = X86FrameRule::Kind;
  FramelessCallers found;
  constexpr size_t kRbpDwarf = 6;
  if (request.space == nullptr || request.regs.arch != Arch::kX86_64 ||
      !request.regs.Has(kRbpDwarf)) {
    return found;
  }
  Process* process = ProcessFor(request);
  if (process == nullptr) return found;
  process->request = &request;
  process->stack_reach = 0;
  process->memory_failure = UnwindStop::kComplete;
  // The chain was walked from this rbp: a framed function further up
  // continues it only if the steps between left rbp as it is.
  const uint64_t chained_rbp = request.regs.value[kRbpDwarf];
  uint64_t rbp = chained_rbp;
  uint64_t pc = request.regs.pc;
  uint64_t sp = request.regs.sp;
  for (size_t step = 0; step < max_steps; ++step) {
    // A caller's pc is a return address: its call is at pc - 1.
    const X86FrameRule& rule = RuleFor(process, step == 0 ? pc : pc - 1).rule;
    // (rbx is not followed here: a frame whose CFA it holds ends the steps.)
    if (!rule.usable || rule.kind[X86FrameRule::kReturnAddress] != Kind::kAtCfa ||
        rule.cfa_base == X86FrameRule::CfaBase::kRbx) {
      break;
    }
    if (rule.cfa_base == X86FrameRule::CfaBase::kRbp) {
      // Its frame is set up: the frame-pointer chain goes on from its
      // caller, if rbp is still the one the chain was walked from.
      found.joined = rbp == chained_rbp;
      found.framed_at_pc = step == 0;
      break;
    }
    const uint64_t cfa = X86Cfa(rule, pc, sp, rbp, /*rbx=*/0);
    Dwarf_Word caller = 0;
    const auto at = [&](size_t reg) { return cfa + static_cast<uint64_t>(rule.offset[reg]); };
    if (!MemoryRead(process->dwfl.get(), at(X86FrameRule::kReturnAddress), &caller, process)) {
      found.stack_too_small = process->memory_failure == UnwindStop::kStackTooSmall;
      break;
    }
    if (rule.kind[X86FrameRule::kRbp] == Kind::kAtCfa) {
      Dwarf_Word saved = 0;
      if (!MemoryRead(process->dwfl.get(), at(X86FrameRule::kRbp), &saved, process)) {
        found.stack_too_small = process->memory_failure == UnwindStop::kStackTooSmall;
        break;
      }
      rbp = saved;
    }
    // The chain's own first caller: it skipped the frames found so far.
    if (caller == chained_caller) {
      found.joined = true;
      break;
    }
    if (HomeOf(process, caller) == PcHome::kNone) break;
    found.callers.push_back(caller);
    found.callers_reach = process->stack_reach;
    pc = caller;
    sp = cfa;  // x86_64: the caller's stack pointer is the CFA
  }
  found.stack_reach = process->stack_reach;
  process->request = nullptr;
  return found;
}

}  // namespace sample
