// What Linux perf leaves on a machine for its own reports, found by
// build-id: the build-id cache (~/.debug, or $PERF_BUILDID_DIR) holds a
// copy of the kernel's symbols ([kernel.kallsyms]/ID/kallsyms) and of the
// vDSO ([vdso]/ID/vdso) for every perf record run; and the running
// kernel's own build-id (/sys/kernel/notes) tells whether /proc/kallsyms
// describes the kernel a perf.data file was recorded on.
//
// Everything here is read as files we did not write: regular files only,
// size-bounded.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "libsample/mapped_file.h"
#include "libsample/result.h"

namespace sample {

// $PERF_BUILDID_DIR, else $HOME/.debug; empty when neither is set.
std::string PerfBuildIdCacheDir();

// The cached copy of a file perf keeps under `name` ("[kernel.kallsyms]"
// and "kallsyms", "[vdso]" and "vdso") for `build_id` (lower-case hex),
// up to `max_bytes`; an error when it is absent or not a regular file.
Result<std::string> ReadPerfCachedFile(const std::string& cache_dir, const std::string& name,
                                       const std::string& build_id, const std::string& file,
                                       size_t max_bytes);
// The same mapped, not read: a kallsyms copy is 5 MB, which a read copies
// into as many fresh pages, each one a page fault.
Result<MappedFile> MapPerfCachedFile(const std::string& cache_dir, const std::string& name,
                                     const std::string& build_id, const std::string& file,
                                     size_t max_bytes);

// The GNU build-id (lower-case hex) in ELF note bytes (/sys/kernel/notes,
// a PT_NOTE segment); nullopt when there is none.
std::optional<std::string> BuildIdFromNotes(const std::vector<std::byte>& notes);

// The running kernel's build-id, from /sys/kernel/notes.
std::optional<std::string> RunningKernelBuildId();

// Reads a whole regular (or /proc) file, up to `max_bytes`.
Result<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes);

}  // namespace sample
