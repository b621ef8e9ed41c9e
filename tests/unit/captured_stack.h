// The test process's own stack as a --call-graph dwarf sample holds it,
// for the tests of the DWARF unwinder and of the report's unwinding stage:
// the user registers at one instruction and the stack bytes above rsp,
// taken three calls deep in functions built without frame pointers (so
// only CFI finds their callers); this process's executable mappings as
// unwinding modules; and what a recording would embed of a module's CFI
// for a walk (its segments and the rows of the walk's pcs), read with
// libdw as the unwinder reads the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "libsample/symbols/embedded_binary.h"
#include "libsample/unwind/dwarf_unwinder.h"

namespace sample::testing {

// The copy's size, as --call-graph dwarf,16384 asks (less near the
// stack's end, as the kernel copies).
inline constexpr size_t kCapturedCopy = 16384;

struct CapturedStack {
  std::vector<uint64_t> perf_regs;  // in UnwindRegsMask(kX86_64) order
  std::vector<std::byte> stack;
  uint64_t return_addresses[3] = {};  // of LevelThree, LevelTwo, LevelOne
};

// Captures the stack in CaptureLeaf, called by LevelThree, LevelTwo and
// LevelOne, called through a frame that realigns the stack and keeps its
// CFA in rbx (SampleTestRealignedCall), called by this (which has a frame
// pointer: the walk's sixth pc is in a framed function). False off x86_64
// or when the main thread's stack is not found.
bool CaptureStack(CapturedStack* out);

// This process's executable mappings of files, as /proc/self/maps lists
// them.
struct SelfMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t pgoff = 0;
  std::string path;
};
std::vector<SelfMapping> SelfExecutableMappings();

// The executable file mappings of this process, as the recorder sees them
// (one module per mapping, start, end and load bias).
UnwindSpace SelfSpace();

// What a recording would embed of `module`'s file for the walk `pcs`: its
// PT_LOAD segments and the CFI row (.eh_frame, else .debug_frame, as the
// unwinder reads them) of every lookup pc of the walk in the module (the
// first pc itself, the others minus one).
EmbeddedBinary EmbedCfi(const UnwindModule& module, const std::vector<uint64_t>& pcs);

}  // namespace sample::testing
