// The allocation functions --alloc probes, and where they are in the
// binaries a target loads.
//
// A program calls the malloc the dynamic linker binds it to: the first
// definition in the search order (the executable, then its libraries as
// the dynamic linker lists them). So a program linked with jemalloc or
// tcmalloc is probed in that library, and a statically linked one in
// itself. operator new and delete are probed where a program defines its
// own; those of libstdc++ and libc++ call malloc and free, which see their
// calls (with operator new in the call chain), and probing them too would
// cost each C++ allocation two or three more breakpoints that the kernel
// single-steps (they begin with endbr64: 16 us a call on this VM).
// mmap and munmap are probed where a binary calls them (their callers'
// anonymous memory, held as a block from mmap to munmap; glibc's own calls
// inside malloc and free count as those), mmap's calls of files left out
// by the kernel.
// Each function gets an entry probe fetching its arguments and, where the
// result matters (every allocating function), a return probe fetching it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/events/uprobe_definitions.h"
#include "libsample/result.h"

namespace sample::record {

struct AllocFunction {
  std::string_view symbol;      // as the ELF symbol table spells it
  std::string_view event;       // the probe's name: "malloc", "op_new_array"
  std::string_view entry_args;  // fetched at the entry, named as the report reads them
  bool returns_pointer = true;  // has a return probe fetching ptr=$retval
  bool core = false;            // probed even where nothing imports it
  // The kernel's filter of the entry probe's calls, on its fetched
  // arguments (mmap's: anonymous memory only); empty: every call.
  std::string_view filter = {};
};

// One function found: in which binary, at which file offset.
struct FoundAllocFunction {
  const AllocFunction* function = nullptr;
  std::string path;
  uint64_t file_offset = 0;
};

// For each function of AllocFunctions, the first of `binaries` (in the
// dynamic linker's search order) that defines it (an exported function
// symbol, or one of a static executable's). Functions at the same place as
// an earlier one (aliases) are left out. Fails when no binary defines
// malloc, naming the binaries looked in.
Result<std::vector<FoundAllocFunction>> FindAllocFunctions(
    const std::vector<std::string>& binaries);

// The binaries a command will load, in the search order: the executable
// (found on PATH as execvp would) and, when it is dynamically linked, the
// libraries its dynamic linker lists for it (`ld.so --list`, as ldd does:
// LD_PRELOAD and LD_LIBRARY_PATH count). A script's interpreter (#!)
// stands for the script.
Result<std::vector<std::string>> CommandBinaries(const std::string& command);

// The binaries running process `pid` maps executable: its executable
// first, its C library last (any other library defining malloc comes
// before it in the search order).
Result<std::vector<std::string>> ProcessBinaries(pid_t pid);

// The probes to define: an entry probe per function found, and a return
// probe (event name + "_return") for those that return a pointer.
std::vector<UprobeDefinition> AllocProbeDefinitions(const std::vector<FoundAllocFunction>& found);

}  // namespace sample::record
