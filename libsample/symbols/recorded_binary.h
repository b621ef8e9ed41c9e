// BinaryLocator: the one policy for finding the file behind a binary a
// recording names, shared by unwinding (which needs its CFI) and
// symbolization (which needs its symbols and DWARF).
//
// Given a mapping's path and the build-id the recording saw for it:
//   a file path  DebugFileFinder finds it (recorded path or under --symfs,
//                build-id checked, debug files, debuginfod when allowed).
//                A file whose build-id differs is used only with `force`,
//                then without a debug file, and always with a warning.
//                When no usable file is found (none, or another build
//                without `force`) and the recording embedded the recorded
//                build (EmbeddedBinary), that is used: its tables name
//                every address the recording hit, so it is neither missing
//                nor mismatched and nothing is said but the source
//                ("embedded", and the other build's id if a file was
//                turned down). A present, matching file still comes first
//                (it may add detail), and `force` still takes the file it
//                was asked to.
//   "[vdso]"     is on no disk: the image the recording stores is used
//                through an in-memory file, after the same build-id check.
//   anything else ([heap], //anon, memfd:...) names no file to find.
// The result says which file to read, which debug file, where the symbols
// come from (the strings --header and --stats show), whether the binary was
// missing or mismatched, and what to tell the user (one warning per problem;
// callers that Locate the same binary show the same text, so the report
// prints it once).
//
// Owns a DebugFileFinder (and with it a debuginfod client) and the vDSO's
// in-memory file, whose path the returned LocatedBinary names: keep the
// locator while that file is read. Not thread-safe, like DebugFileFinder:
// use one locator per thread. Locate does the file system work on every
// call; callers remember what they found.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/memory_file.h"
#include "libsample/symbols/debug_file_finder.h"
#include "libsample/symbols/embedded_binary.h"

namespace sample {

// The name the kernel gives the vDSO's mapping (in MMAP2 records and
// /proc/PID/maps), and the key of its build-id in a recording.
inline constexpr std::string_view kVdsoPath = "[vdso]";

// Where and how binaries are looked for: only what the user says
// (--symfs, the debug root, --no-debuginfod, --force), set once from the
// command line and passed whole to every stage that finds binaries.
struct BinaryLocatorOptions {
  // Where files are looked for: symfs (perf's --symfs), the debug root,
  // debuginfod; handed whole to the DebugFileFinder.
  DebugFileFinderOptions files;
  // Use a file whose build-id differs from the recorded one (with a warning).
  bool force = false;
};

// The recording's own sources of code, handed to a locator once by
// whoever holds the recording (the loader, the annotate view). Both must
// outlive the locator.
struct RecordedCode {
  // The recording host's vDSO image; empty when the recording has none.
  std::span<const std::byte> vdso_image;
  // What the recording embedded of its binaries, used when a binary is
  // missing or is another build (nullptr: nothing embedded).
  const EmbeddedBinaries* embedded = nullptr;
};

// How one stage uses its locator: the stage's to say, not the user's.
struct LocatorUse {
  // False: never ask debuginfod servers, whatever the options say (a walk
  // must not wait on the network).
  bool debuginfod = true;
  // Told about each running download, for a progress line; may be empty.
  DebuginfodProgressFn progress;
};

struct LocatedBinary {
  std::string path;  // as the recording names it
  // The file to read (for the vDSO, the locator's in-memory copy); empty
  // when none is usable.
  std::string binary;
  // Its separate debug file (symbols, DWARF, .debug_frame); may be empty.
  std::string debug;
  // The debug file found, when `debug` is its inflated copy in this user's
  // cache (inflated_debug.h), else empty: the copy is this user's whoever
  // wrote the original, so what decides whose source files its DWARF may
  // name (the annotate view) is the original.
  std::string found_debug;
  // Where the symbols come from, for --header and --stats: "recorded path",
  // "symfs", "build-id dir", "debuginfod", "recorded image", ... or
  // "none: <why>".
  std::string source;
  // When no usable file was found: what the recording embedded of the
  // binary (then `source` says "embedded"), or nullptr.
  const EmbeddedBinary* embedded = nullptr;
  // A file the user could supply was not found (not set for the vDSO).
  bool missing = false;
  // A file was found but its build-id is not the recorded one.
  bool mismatched = false;
  // For the user, once per binary: a mismatch (used or not), an unreadable
  // vDSO image.
  std::vector<std::string> warnings;

  // The caller opened `binary`; `has_dwarf`: DWARF was found in it or in
  // its debug file (shown after the source of a file on disk).
  void NoteOpened(bool has_dwarf);
  // The caller could not read `binary` (`error` says why): nothing is used,
  // the error becomes a warning and the source says why.
  void NoteUnreadable(const std::string& error);

  bool is_vdso() const { return path == kVdsoPath; }
};

class BinaryLocator {
 public:
  explicit BinaryLocator(BinaryLocatorOptions options, RecordedCode recorded = {},
                         LocatorUse use = {});
  BinaryLocator(const BinaryLocator&) = delete;
  BinaryLocator& operator=(const BinaryLocator&) = delete;

  // `recorded_build_id`: hex, empty when the recording has none (then any
  // file at the path is taken).
  LocatedBinary Locate(const std::string& path, const std::string& recorded_build_id);

 private:
  LocatedBinary LocateFile(const std::string& path, const std::string& recorded_build_id);
  LocatedBinary LocateVdso(const std::string& recorded_build_id);

  BinaryLocatorOptions options_;
  RecordedCode recorded_;
  DebugFileFinder finder_;
  // The same without debuginfod, for binaries the recording embeds.
  std::optional<DebugFileFinder> local_finder_;
  // The vDSO image as a file, created on first use; or why it cannot be.
  std::optional<MemoryFile> vdso_file_;
  std::string vdso_error_;
};

}  // namespace sample
