#include "libsample/symbols/own_build.h"

#include <link.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample {

const std::string& OwnBuildIdentity() {
  static const std::string id = [] {
    std::string own = ReadElfBuildId("/proc/self/exe").value_or("");
    if (own.empty()) return own;
    std::vector<std::string> libraries;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
          const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
          const std::string base = Basename(name);
          if (base.starts_with("libdw") || base.starts_with("libelf")) {
            static_cast<std::vector<std::string>*>(out)->push_back(
                fmt::format("{} {}", base, ReadElfBuildId(name).value_or("?")));
          }
          return 0;
        },
        &libraries);
    std::sort(libraries.begin(), libraries.end());
    return fmt::format("{} ({})", own, fmt::join(libraries, ", "));
  }();
  return id;
}

}  // namespace sample
