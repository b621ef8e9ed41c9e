// The per-user cache of sample's tools: $XDG_CACHE_HOME/sample, else
// ~/.cache/sample (the XDG base directory rule). Kept there: the sorted
// kernel symbols of this boot (libsample/symbols/kallsyms_snapshot.h), inflated
// debug files (libsample/symbols/inflated_debug.h) and learnt frames
// (record/facts/frame_cache.h), each in a directory of its own.
#pragma once

#include <string>
#include <string_view>

namespace sample {

// The cache directory, or CACHE/`sub` when `sub` is not empty; "" when
// neither variable names an absolute directory.
std::string UserCacheDir(std::string_view sub = "");

// Makes `path` (absolute; and its parents) if missing, mode 0700; true if
// it is then a directory of this user that no one else may write.
bool MakeOwnDirectory(const std::string& path);

}  // namespace sample
