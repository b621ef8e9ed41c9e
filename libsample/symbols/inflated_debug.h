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
// uses open that copy (libc's: 9 ms instead of 48). The directory is
// reached by OpenCacheDirectory's checked walk (no cache when any
// component is another user's: root run with a user's HOME); the copy is
// written under an unpredictable temporary name (O_EXCL, 0600) through the
// directory's fd, inflated there and renamed into place; a cached file is
// taken only if it is a regular file of ours (opened without following a
// symlink) with the right build-id. The path handed back, for libdw to
// open, is the one the walk took (symlinks resolved), whose directories
// only root and this user can change. Any failure gives the original path
// back, costing only the time.
//
// Sizes are judged before anything is inflated, from the compressed
// sections' headers (JudgeCompression, libsample/symbols/compressed_sections.h):
// a zlib bomb is not used at all ("" is returned: libdw would inflate the
// same claim); a copy that would pass kMaxInflatedDebugBytes is not made
// (the original is returned, read by libdw as it would be without the
// cache). Whatever path is returned, the DWARF readers judge the file
// again on the fd they read.
// The directory is trimmed after each copy written: least recently used
// first (a hit marks its file used) past kMaxInflatedDebugCacheBytes, and
// copies unused for kDebugCacheUnusedSeconds. libc6-dbg's copy is 10 MB.
#pragma once

#include <cstdint>
#include <string>

#include "libsample/symbols/compressed_sections.h"

namespace sample {

inline constexpr uint64_t kMaxInflatedDebugCacheBytes = uint64_t{2} << 30;
inline constexpr int64_t kDebugCacheUnusedSeconds = int64_t{30} * 24 * 3600;

// `debug` itself when it holds no compressed section, its copy would be
// too large, or the cache cannot be used; "" when its sections claim more
// than kMaxInflateRatio allows (a bomb: use no debug file); else the path
// of its inflated copy (written now if needed).
// `build_id`: its build-id, lowercase hex.
std::string InflatedDebugFile(const std::string& debug, const std::string& build_id);

// The cache directory InflatedDebugFile uses ("" when there is none).
std::string InflatedDebugCacheDir();

}  // namespace sample
