#include "libsample/cache_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

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

}  // namespace sample
