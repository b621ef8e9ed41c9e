// The annotate cache: what `sample-report --annotate` counted of a
// recording (its AnnotateIndex: every function's samples by address), kept
// in UserCacheDir("annotate") (libsample/cache_dir.h), so that annotating
// another function of the same recording with the same options reads no
// sample. perf annotate takes one function a run and reads the whole file
// each time; so did we, and on a 1M-sample file that read was nearly all
// of a run (0.19 s, the index 0.01 s).
//
// One file per key. The key is everything the index depends on besides
// the binaries: this build of sample and of libdw and libelf; the host's
// kernel symbols as this user reads them (the boot, the loaded modules,
// kptr_restrict, the user); the working directory (a relative --symfs);
// the environment that finds files (HOME and PERF_BUILDID_DIR, where
// perf's build-id cache is, and debuginfod's variables); every option
// that changes what is loaded or kept (all but the view's: which
// functions, --annotate-source, -M, --format, -o, -j); and each input
// file's path, device, inode, size and modification time. No key (no
// cache) without a build-id or a boot id.
//
// The binaries are checked on every use: the file holds, for each binary
// the load symbolized with, where the locator finds it now (and its debug
// file, and for the kernel and the vDSO perf's cached copy) with those
// files' devices, inodes, sizes and modification times, looked for as the
// load looked (the recording's embedded binaries stood in for by
// EmbeddedStandIns); a rebuilt binary or a newly installed debug package
// makes the file stale, and the next run writes it again. Not written:
// when a binary is found now where the load did not find it (a download
// that failed then), when names may come from a perf map (a file the
// running JIT writes: a JIT's pseudo-DSO /tmp/perf-PID.map, a memfd), and
// when the recording has jitdumps. A function whose code is only in the recording
// (embedded, no file standing in) is annotated from the recording
// (AnnotateView::needs_recording).
//
// The directory is reached by the checked walk of libsample/cache_dir.h
// (no cache when a component is another user's: root run with a user's
// HOME) and used through its fd: files are written whole under an
// unpredictable temporary name and renamed into place (temporary files an
// hour old, of a run killed while writing, are removed), and read only as
// regular files of this user; a file that fails its checksum, its decoding
// or its key counts as absent and is replaced. A hit touches its file;
// past kMaxAnnotateCacheFiles files or kMaxAnnotateCacheBytes the least
// recently used go, and files unused for kAnnotateCacheUnusedSeconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libsample/symbols/recorded_binary.h"
#include "report/views/annotate_view.h"

namespace sample::report {

// Where one binary was found (BinaryLocator), with the identity of the
// files read, as text: equal when the same files would be read.
struct BinaryFingerprint {
  std::string path;      // as the recording names it
  std::string build_id;  // as recorded
  std::string source;    // LocatedBinary::source: "recorded path", "embedded", "none: ..."
  std::string found;     // the files, with their identities
  bool operator==(const BinaryFingerprint&) const = default;
};

struct CachedAnnotate {
  AnnotateIndex index;
  std::vector<std::string> warnings;  // the load's, in order
  std::vector<BinaryFingerprint> binaries;
  // The recording's embedded binaries (path, build-id), whose stand-ins
  // (EmbeddedStandIns) make a later run look for binaries as the load did.
  std::vector<std::pair<std::string, std::string>> embedded;
  bool operator==(const CachedAnnotate&) const = default;
};

inline constexpr size_t kMaxAnnotateCacheFiles = 64;
// Files are up to 256 MiB each: the directory is bounded in bytes too.
inline constexpr uint64_t kMaxAnnotateCacheBytes = uint64_t{1} << 30;
inline constexpr int64_t kAnnotateCacheUnusedSeconds = int64_t{30} * 24 * 3600;

// The options that shape what --annotate counts, one a line as given
// (each option's long name and its values, from the command line's
// parse): all but the view's own (which functions, how they are shown,
// where the text goes, --no-cache), -j (the same count on any number of
// threads) and -i, whose files the key names by identity.
std::string AnnotateCacheOptions(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& given);

// The key of `inputs` loaded with `options` (the options as main.cc
// canonicalized them); "" when there is nothing to key on (this program's
// build-id unreadable, an input that cannot be stat()ed): no caching.
std::string AnnotateCacheKey(std::string_view options, const std::vector<std::string>& inputs);

// `binaries` (path, recorded build-id) as a locator with `locator` and
// the recording's `recorded` code finds them now. The
// kernel's and the vDSO's also name perf's cached copy of them
// (~/.debug/[kernel.kallsyms]/ID/kallsyms, [vdso]/ID/vdso), which a
// perf.data report reads.
std::vector<BinaryFingerprint> FingerprintBinaries(
    const std::vector<std::pair<std::string, std::string>>& binaries,
    const BinaryLocatorOptions& locator, const RecordedCode& recorded);

// (path, build-id) pairs as embedded binaries without contents: found
// where the recording's would be (BinaryLocator), holding no code.
EmbeddedBinaries EmbeddedStandIns(const std::vector<std::pair<std::string, std::string>>& embedded);

std::string EncodeCachedAnnotate(const std::string& key, const CachedAnnotate& cached);
// nullopt for anything but a whole, intact file of `key`.
std::optional<CachedAnnotate> DecodeCachedAnnotate(std::span<const std::byte> bytes,
                                                   const std::string& key);

// The cache file of `key` in `dir`; nullopt when absent or unusable.
std::optional<CachedAnnotate> ReadAnnotateCache(const std::string& dir, const std::string& key);
// Best effort: nothing is said when the directory cannot be written.
void WriteAnnotateCache(const std::string& dir, const std::string& key,
                        const CachedAnnotate& cached, size_t max_files = kMaxAnnotateCacheFiles);

}  // namespace sample::report
