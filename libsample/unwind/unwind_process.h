// The state DwarfUnwinder keeps for one process, shared by its two
// walks (dwarf_unwinder.cc): libdw's over its Dwfl, and the x86_64 walk
// with cached CFI rules (unwind_process.cc), which reads the same memory
// the same way. Private to libsample/unwind: nothing else includes it.
#pragma once

#include <elfutils/libdwfl.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "libsample/symbols/x86_frame_rule.h"
#include "libsample/unwind/dwarf_unwinder.h"

namespace sample {
namespace unwind_process {

struct DwflDeleter {
  void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
};
using DwflPtr = std::unique_ptr<Dwfl, DwflDeleter>;

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

}  // namespace unwind_process

struct DwarfUnwinder::Process {
  // Modules reported, by (start, binary), with the copy their userdata
  // points at (declared first: the Dwfl goes first).
  std::map<std::pair<uint64_t, std::string>, std::unique_ptr<UnwindModule>> reported;
  unwind_process::DwflPtr dwfl;
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
  // The recorded ranges of the modules with a file: a file's code mapped
  // where its ELF layout does not put it (V8 remaps its builtins there)
  // is in no libdw module but is the file's all the same, as an embedded
  // module's range covers it.
  std::vector<std::pair<uint64_t, uint64_t>> file_ranges;
  // x86_64 CFI rules by lookup pc, for the fast path; cleared when the
  // modules change.
  std::unordered_map<uint64_t, unwind_process::CachedRule> rules;

  // The cached walk can run with embedded modules alone; libdw's needs a
  // file to attach with.
  bool usable() const { return attached || !embedded.empty(); }
};

namespace unwind_process {

using Process = DwarfUnwinder::Process;

// The embedded module holding `pc`, or nullptr.
const UnwindModule* EmbeddedModuleAt(const Process& process, uint64_t pc);
PcHome HomeOf(Process* process, uint64_t pc);
// libdw's memory callback (`arg` is the Process): a word of the sample's
// stack copy, else of a read-only segment of a mapped file; a failure
// notes why in process->memory_failure.
bool MemoryRead(Dwfl* dwfl, Dwarf_Addr addr, Dwarf_Word* result, void* arg);
// The `word`-byte word (4 or 8, zero-extended) of `request`'s stack copy at
// `addr`; `reach` grows to the bytes from sp it read. False outside the copy.
bool ReadStackCopy(const UnwindRequest& request, uint64_t addr, uint64_t word, uint64_t* value,
                   uint64_t* reach);
// Whether `addr`, outside the copy, is where the stack goes on: a bigger
// copy would hold it (UnwindStop::kStackTooSmall).
bool BeyondStackCopy(const UnwindRequest& request, uint64_t addr);
// The x86_64 rule of lookup pc `pc`, cached per process until its modules
// change.
const CachedRule& RuleFor(Process* process, uint64_t pc);

// How a walk with cached rules went.
struct CachedWalk {
  // nullopt: some frame needs more than the rules hold (libdw's walk);
  // `pcs` then ends with that frame.
  std::optional<UnwindStop> stop;
  PcHome gave_up_in = PcHome::kNone;  // where that frame's pc is
  bool embedded = false;              // a frame it stepped was in an embedded module
};

// Walks an x86_64 stack with cached rules, appending its pcs.
CachedWalk WalkWithRules(Process* process, const UnwindRequest& request,
                         std::vector<uint64_t>* pcs);

}  // namespace unwind_process
}  // namespace sample
