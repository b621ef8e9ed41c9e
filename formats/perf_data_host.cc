#include "formats/perf_data_host.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "libsample/symbols/perf_buildid_cache.h"
#include "libsample/symbols/vdso_image.h"

namespace sample::format {
namespace {

constexpr size_t kMaxKallsymsBytes = size_t{64} << 20;
constexpr size_t kMaxVdsoBytes = size_t{1} << 20;

}  // namespace

PerfDataHostFacts FindPerfDataHostFacts(const Metadata& metadata, const Metadata& build_ids,
                                        const PerfDataHost& host) {
  PerfDataHostFacts facts;
  std::string& source = facts.kernel_symbols_source;
  source = "none";
  auto found = std::find_if(build_ids.begin(), build_ids.end(),
                            [](const auto& entry) { return entry.first == "[kernel.kallsyms]"; });
  const std::optional<std::string> recorded =
      found != build_ids.end() ? std::optional(found->second) : std::nullopt;
  if (host.use_host) {
    const std::string cache =
        host.buildid_cache.empty() ? PerfBuildIdCacheDir() : host.buildid_cache;
    if (recorded) {
      if (auto text = MapPerfCachedFile(cache, "[kernel.kallsyms]", *recorded, "kallsyms",
                                        kMaxKallsymsBytes);
          text && !text->bytes().empty()) {
        facts.kernel_symbols = std::move(*text);
        source = fmt::format("perf's build-id cache ({}/[kernel.kallsyms]/{})", cache, *recorded);
      }
    }
    // Whether this host runs the kernel the file was recorded on: the
    // running kernel's build-id is the recorded one, or none was recorded
    // and the host name and kernel release are the same.
    const std::optional<std::string> running =
        host.kernel_build_id ? host.kernel_build_id : RunningKernelBuildId();
    utsname uts{};
    const bool same_release =
        uname(&uts) == 0 && FindMetadata(metadata, "os_release") == std::string(uts.release) &&
        FindMetadata(metadata, "hostname") == std::string(uts.nodename);
    const char* same_kernel = recorded && running == recorded ? "this host runs the recorded kernel"
                              : !recorded && same_release ? "same host name and kernel release"
                                                          : nullptr;
    if (!facts.kernel_symbols) {
      if (same_kernel != nullptr) {
        // Read when the sampled addresses are known, for those alone.
        if (access(host.kallsyms.c_str(), R_OK) == 0) {
          facts.host_kallsyms = host.kallsyms;
          source = fmt::format("{} ({})", host.kallsyms, same_kernel);
        } else {
          source = fmt::format("none ({}, but {} cannot be read)", same_kernel, host.kallsyms);
        }
      } else if (recorded) {
        source = fmt::format("none (kernel build-id {} is not in {} and not the running kernel's)",
                             *recorded, cache);
      }
    }
    auto vdso = std::find_if(build_ids.begin(), build_ids.end(),
                             [](const auto& entry) { return entry.first == "[vdso]"; });
    if (vdso != build_ids.end()) {
      if (auto image = ReadPerfCachedFile(cache, "[vdso]", vdso->second, "vdso", kMaxVdsoBytes)) {
        const auto* data = reinterpret_cast<const std::byte*>(image->data());
        facts.vdso_image.assign(data, data + image->size());
      }
    }
    // The same kernel maps the same vDSO into every 64-bit process: ours.
    if (facts.vdso_image.empty() && same_kernel != nullptr && host.own_vdso) {
      if (auto image = ReadOwnVdsoImage()) facts.vdso_image = std::move(*image);
    }
  }
  return facts;
}

}  // namespace sample::format
