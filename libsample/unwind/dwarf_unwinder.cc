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
#include "libsample/symbols/compressed_sections.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/x86_frame_rule.h"
#include "libsample/unwind/binary_rules.h"
#include "libsample/unwind/unwind_process.h"

namespace sample {
namespace {

// Modules are reported with their ELF files; libdwfl never has to find one.
int NoElf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) { return -1; }

// .debug_frame lives in the separate debug file the report already found
// (build-id checked); the module's userdata points at its UnwindModule.
int FindDebugFile(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*, const char*,
                  GElf_Word, char** debuginfo_file_name) {
  const auto* module = static_cast<const UnwindModule*>(*userdata);
  if (module == nullptr || module->debug.empty()) return -1;
  auto fd = OpenRegularFile(module->debug);  // never a FIFO or device
  // libdwfl inflates its DWARF sections from this fd: a zlib bomb is none.
  if (!fd || !CheckCompressedSectionsOfFd(fd->get(), module->debug)) return -1;
  *debuginfo_file_name = strdup(module->debug.c_str());
  return fd->Release();
}

const Dwfl_Callbacks kDwflCallbacks = {
    .find_elf = NoElf,
    .find_debuginfo = FindDebugFile,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

using Process = DwarfUnwinder::Process;
using unwind_process::CachedWalk;
using unwind_process::HomeOf;
using unwind_process::MemoryRead;
using unwind_process::PcHome;
using unwind_process::RuleFor;
using unwind_process::WalkWithRules;

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
    case UnwindStop::kLoop:
      return "looping frames";
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
  process->file_ranges.clear();
  for (const UnwindModule& module : modules) {
    if (module.binary.empty()) {
      if (module.embedded != nullptr) process->embedded.push_back(module);
      continue;
    }
    process->file_ranges.emplace_back(module.start, module.end);
    auto [it, inserted] = process->reported.try_emplace({module.start, module.binary});
    if (!inserted) {
      it->second->debug = module.debug;
      continue;
    }
    // add_p_vaddr: `bias` is added to the segments' vaddrs (for ET_DYN;
    // ET_EXEC files sit at their own addresses).
    // Our own descriptor (libdwfl takes it over): given -1, libdwfl would
    // open the path itself, blocking on a FIFO planted there.
    // A zlib bomb (judged on that fd) is not reported at all: libdwfl
    // reads a binary's own DWARF, inflating it, before any other CFI.
    auto fd = OpenRegularFile(module.binary);
    if (fd && !CheckCompressedSectionsOfFd(fd->get(), module.binary)) fd = Fail("a zlib bomb");
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

namespace {

// The module of `space` holding `pc` (modules are in address order), or
// nullptr; a module with neither a file nor embedded rows is none.
const UnwindModule* ModuleAt(const UnwindSpace& space, uint64_t pc) {
  auto next =
      std::upper_bound(space.modules.begin(), space.modules.end(), pc,
                       [](uint64_t value, const UnwindModule& m) { return value < m.start; });
  // (Modules do not overlap: a file's pieces are one module only when
  // nothing lies between them.)
  if (next == space.modules.begin()) return nullptr;
  const UnwindModule& module = *std::prev(next);
  if (pc >= module.end || (module.binary.empty() && module.embedded == nullptr)) return nullptr;
  return &module;
}

}  // namespace

const X86FrameRule& DwarfUnwinder::LeafRuleAt(const UnwindSpace& space, uint64_t pc) {
  static const X86FrameRule kNone;
  const UnwindModule* module = ModuleAt(space, pc);
  if (module == nullptr) return kNone;
  if (module->binary.empty()) {
    const CfiRow* row = module->embedded->CfiRowAt(pc - module->bias);
    return row != nullptr ? row->rule : kNone;
  }
  if (!binary_rules_) binary_rules_ = std::make_unique<BinaryRules>();
  return binary_rules_->RuleAt(*module, pc - module->bias);
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
  // No Dwfl of the process: the rules come from each binary's CFI, read
  // once per binary (BinaryRules), or from the rows the recording
  // embedded; memory from the stack copy.
  const UnwindSpace& space = *request.space;
  uint64_t reach = 0;
  const auto read = [&](uint64_t addr, uint64_t* value) {
    if (unwind_process::ReadStackCopy(request, addr, 8, value, &reach)) return true;
    found.stack_too_small = unwind_process::BeyondStackCopy(request, addr);
    return false;
  };
  // The chain was walked from this rbp: a framed function further up
  // continues it only if the steps between left rbp as it is.
  const uint64_t chained_rbp = request.regs.value[kRbpDwarf];
  uint64_t rbp = chained_rbp;
  uint64_t pc = request.regs.pc;
  uint64_t sp = request.regs.sp;
  for (size_t step = 0; step < max_steps; ++step) {
    // A caller's pc is a return address: its call is at pc - 1.
    const X86FrameRule& rule = LeafRuleAt(space, step == 0 ? pc : pc - 1);
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
    uint64_t caller = 0;
    const auto at = [&](size_t reg) { return cfa + static_cast<uint64_t>(rule.offset[reg]); };
    if (!read(at(X86FrameRule::kReturnAddress), &caller)) break;
    if (rule.kind[X86FrameRule::kRbp] == Kind::kAtCfa) {
      uint64_t saved = 0;
      if (!read(at(X86FrameRule::kRbp), &saved)) break;
      rbp = saved;
    }
    // The chain's own first caller: it skipped the frames found so far.
    if (caller == chained_caller) {
      found.joined = true;
      break;
    }
    if (ModuleAt(space, caller) == nullptr) break;
    found.callers.push_back(caller);
    found.callers_reach = reach;
    pc = caller;
    sp = cfa;  // x86_64: the caller's stack pointer is the CFA
  }
  found.stack_reach = reach;
  return found;
}

}  // namespace sample
