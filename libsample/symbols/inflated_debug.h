// InflatedDebugFile: a separate debug file with its DWARF stored inflated,
// kept in a per-user cache by build-id, so that opening it costs no zlib.
//
// Distribution debug files (Debian's libc6-dbg and -dbgsym packages) store
// their DWARF zlib-compressed (SHF_COMPRESSED), and libdw inflates the
// sections it reads whole when it opens the file: 48 ms for libc's,
// measured, at the end of every recording whose samples hit libc. The
// first use of a build's debug file writes an inflated copy (what
// elfutils' eu-elfcompress -t none makes) to
// UserCacheDir("debug")/<build-id>.debug (libsample/cache_dir.h); later
// uses open that copy (libc's: 9 ms instead of 48). The
// directory is made if missing (mode 0700) and used only if
// it is ours and no one else may write it; a cached file only if it is a
// regular file of ours with the right build-id. Any failure gives the
// original path back, costing only the time. Like perf's ~/.debug and
// debuginfod's cache, it is never trimmed: one file per debug build used
// (libc's: 10 MB).
#pragma once

#include <string>

namespace sample {

// `debug` itself when it holds no compressed section or the cache cannot
// be used; else the path of its inflated copy (written now if needed).
// `build_id`: its build-id, lowercase hex.
std::string InflatedDebugFile(const std::string& debug, const std::string& build_id);

// The cache directory InflatedDebugFile uses ("" when there is none).
std::string InflatedDebugCacheDir();

}  // namespace sample
