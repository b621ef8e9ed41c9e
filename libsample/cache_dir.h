// The per-user cache of sample's tools: $XDG_CACHE_HOME/sample, else
// ~/.cache/sample (the XDG base directory rule). Kept there: the sorted
// kernel symbols of this boot (libsample/symbols/kallsyms_snapshot.h), inflated
// debug files (libsample/symbols/inflated_debug.h) and learnt frames
// (record/facts/frame_cache.h) and annotate indexes (report/annotate_cache.h),
// each in a directory of its own.
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

// This build of sample (the running program's build-id) and of the DWARF
// libraries it loaded (libdw's and libelf's), so that a cache another build
// wrote (whose symbolizer may name things otherwise) is not taken: "" when
// the program's build-id cannot be read (then nothing is cached).
const std::string& OwnBuildIdentity();

}  // namespace sample
