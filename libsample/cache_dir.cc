#include "libsample/cache_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <link.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample {

std::string UserCacheDir(std::string_view sub) {
  std::string dir;
  if (const char* xdg = getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    dir = std::string(xdg) + "/sample";
  } else if (const char* home = getenv("HOME"); home != nullptr && home[0] == '/') {
    dir = std::string(home) + "/.cache/sample";
  } else {
    return "";
  }
  if (!sub.empty()) dir += "/" + std::string(sub);
  return dir;
}

bool MakeOwnDirectory(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) break;
  }
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

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
