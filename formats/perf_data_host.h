// What the reporting host can add to a perf.data file, which carries no
// kernel symbols and no vDSO of its own: perf's build-id cache (~/.debug,
// filled by perf record) holds both by build-id; failing that, a host that
// runs the recorded kernel (same build-id, or same host name and release
// when none was recorded) has them in /proc/kallsyms and in every process.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/mapped_file.h"

namespace sample::format {

// Where the host's facts are looked up (tests point these elsewhere).
struct PerfDataHost {
  std::string buildid_cache;            // PerfBuildIdCacheDir() when empty
  std::string kallsyms = "/proc/kallsyms";
  std::optional<std::string> kernel_build_id;  // RunningKernelBuildId() when nullopt
  bool use_host = true;                        // false: no host lookups at all
  bool own_vdso = true;  // borrow this process's vDSO when the kernel is the recorded one
};

struct PerfDataHostFacts {
  // perf's copy of the kallsyms text, mapped; nullopt if none was found.
  std::optional<MappedFile> kernel_symbols;
  // Or, on a host that runs the recorded kernel, its table's path (the
  // host's kallsyms): looked up for the sampled addresses alone
  // (RecordingFile::host_kallsyms); kernel_symbols is then nullopt.
  std::string host_kallsyms;
  std::string kernel_symbols_source;  // where from, or "none (why)"
  std::vector<std::byte> vdso_image;
};

// The kernel symbols and vDSO for a perf.data with these facts (its
// "hostname" and "os_release") and build-ids ("[kernel.kallsyms]", "[vdso]").
PerfDataHostFacts FindPerfDataHostFacts(const Metadata& metadata, const Metadata& build_ids,
                                        const PerfDataHost& host);

}  // namespace sample::format
