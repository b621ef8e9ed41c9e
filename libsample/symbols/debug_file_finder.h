// DebugFileFinder: finds, for a binary a recording saw (its path and
// build-id), the file to read its code layout from and the separate debug
// file holding its symbols and DWARF.
//
// Order (the first usable candidate wins; every one turned down is listed in
// FoundFiles::rejected with the reason):
//   binary:  the recorded path, or under `symfs` DIR + path then DIR +
//            basename (perf's --symfs); usable only if its identity
//            (file_identity.h: the GNU build-id, else Go's, else a hash)
//            is the recorded one (a mismatch is reported, not used); then,
//            with a GNU build-id, debuginfod's executable.
//   debug:   not looked for if the binary has DWARF itself; else the
//            binary's .gnu_debuglink (the binary's dir, its .debug/ subdir,
//            the debug root + the binary's dir; the CRC-32 must match), then
//            debug root/.build-id/xx/rest.debug, then debuginfod. Every
//            candidate's build-id must be the binary's.
// Local paths, the debug root included, are taken under `symfs`.
// debuginfod is asked only when DEBUGINFOD_URLS is set.
//
// Owns the debuginfod client (created on first use). Not thread-safe: use
// one finder per thread, or one thread at a time.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "libsample/symbols/debuginfod_client.h"

namespace sample {

struct DebugFileFinderOptions {
  // Root prefix of every local path; empty: the real root.
  std::string symfs;
  // The global debug directory (gdb's debug-file-directory), under symfs.
  std::string debug_root = "/usr/lib/debug";
  // Ask debuginfod servers (only when DEBUGINFOD_URLS names one).
  bool use_debuginfod = true;
  // Time one binary's debuginfod queries may take in all, then they are
  // cancelled; zero: only libdebuginfod's own timeouts (DEBUGINFOD_TIMEOUT,
  // for connecting and for a stalled transfer) apply.
  std::chrono::milliseconds debuginfod_timeout{std::chrono::seconds(90)};
};

// Where a file was found.
enum class FileSource {
  kNone,
  kRecordedPath,   // the path the recording saw
  kSymfs,          // symfs + path
  kSymfsBasename,  // symfs + basename
  kDebugLink,      // .gnu_debuglink
  kBuildIdDir,     // debug root/.build-id/xx/rest.debug
  kDebuginfod,
};

// "recorded path", "symfs", "symfs basename", ".gnu_debuglink", "build-id
// dir", "debuginfod" or "none".
const char* FileSourceName(FileSource source);

// A build-id as the finder's and the locator's messages show it: "none"
// for a file or recording that has none.
inline std::string BuildIdOrNone(const std::string& build_id) {
  return build_id.empty() ? "none" : build_id;
}

struct RejectedFile {
  std::string path;    // or "debuginfod" for a failed query
  std::string reason;  // e.g. "build-id 1234..., recorded abcd..."
};

struct FoundFiles {
  // The binary to open (BinarySymbolizer's binary_path); empty if none is
  // usable.
  std::string binary;
  FileSource binary_source = FileSource::kNone;
  // The build-id the files were matched against: the recorded one, else the
  // binary's own.
  std::string build_id;
  // True if `binary` has DWARF of its own (no debug file was looked for).
  bool binary_has_dwarf = false;
  // The separate debug file (BinarySymbolizer's debug_path); empty if none.
  std::string debug;
  FileSource debug_source = FileSource::kNone;
  // The first file at the binary's place whose build-id differs from the
  // recorded one; not used, but a caller told to (--force) may.
  std::string mismatched_binary;
  std::string mismatched_build_id;  // its build-id ("" if it has none)
  // Every candidate that existed (or query that ran) but was turned down,
  // in the order tried. Missing candidates are not listed.
  std::vector<RejectedFile> rejected;

  // The source of the function names: the debug file's, else the binary's.
  FileSource symbol_source() const { return debug.empty() ? binary_source : debug_source; }
};

class DebugFileFinder {
 public:
  // `progress`: told about each running debuginfod download, for a
  // progress line; may be empty.
  explicit DebugFileFinder(DebugFileFinderOptions options, DebuginfodProgressFn progress = nullptr);
  DebugFileFinder(DebugFileFinder&&) noexcept;
  DebugFileFinder& operator=(DebugFileFinder&&) noexcept;
  ~DebugFileFinder();

  // `recorded_build_id` is the identity the recording stored
  // (file_identity.h): a GNU build-id in lowercase or uppercase hex, a Go
  // build ID or a hash, which check the binary only; or empty if the
  // recording has none (then any file at the path is taken, and only its
  // own build-id, if any, checks debug files).
  FoundFiles Find(const std::string& recorded_path, const std::string& recorded_build_id);

  const DebugFileFinderOptions& options() const { return options_; }

 private:
  struct Search;
  // The client, created on first use; nullptr if debuginfod is off or the
  // client cannot start (the reason is then in `error`).
  DebuginfodClient* Debuginfod(std::string* error);

  DebugFileFinderOptions options_;
  DebuginfodProgressFn progress_;
  std::optional<DebuginfodClient> debuginfod_;
  std::string debuginfod_error_;
  bool debuginfod_tried_ = false;
};

}  // namespace sample
