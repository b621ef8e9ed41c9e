// The vDSO image of this machine, as the recording stores it (kVdso), and
// as a report of a perf.data from this host (same kernel) borrows it.
//
// The kernel maps the same [vdso] ELF image into every process of one ABI
// (the 64-bit one here; compat 32-bit and x32 processes get their own), and
// it is nowhere on disk, so a report elsewhere could not name frames in it.
// The recorder copies it out of its own address space: getauxval
// (AT_SYSINFO_EHDR) gives its start and /proc/self/maps its extent.
#pragma once

#include <cstddef>
#include <vector>

#include "libsample/result.h"

namespace sample {

// A copy of the recorder's [vdso] mapping; an error if there is none (a
// kernel without vDSO) or it cannot be found in /proc/self/maps.
Result<std::vector<std::byte>> ReadOwnVdsoImage();

}  // namespace sample
