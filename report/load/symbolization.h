// Symbolization of a recording's distinct code locations.
//
// A location is a DSO and an offset: a file offset for binaries, the
// absolute address for the kernel, for JIT code named by a perf map (the
// pseudo-DSO /tmp/perf-PID.map, as perf names it) and for unknown
// addresses; the offset in the pseudo-DSO "[jitted-PID]" for JIT code a
// jitdump named (JitTimeline).
// SymbolizeLocations groups the locations by DSO and asks each DSO's
// SymbolSource (symbol_sources.h) once for all of its offsets: the recorded
// kallsyms, the process's jitdump code (JitDumpSymbolSource), the JIT's
// perf map (the text the recording holds for the process, else the file),
// or the binary BinaryLocator finds (recorded
// path or --symfs, build-id check, debug files, debuginfod; the [vdso]
// image the recording stores; else what the recording embedded of it:
// EmbeddedSymbolSource). Binaries are spread over `jobs` threads,
// each with its own locator and sources (libdw is not thread-safe); the
// kernel, JIT maps and the [vdso] are done on the calling thread.
// Computes only; the pipeline turns frames into Profile functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/result.h"
#include "libsample/symbols/jit_code.h"
#include "libsample/symbols/kallsyms_snapshot.h"
#include "libsample/symbols/perf_map.h"
#include "libsample/symbols/recorded_binary.h"
#include "report/load/symbol_sources.h"

namespace sample::report {

struct Location {
  uint32_t dso;
  uint64_t offset;
  bool operator==(const Location&) const = default;
};

struct SymbolizeOptions {
  unsigned jobs = 1;
  // How binaries are found (--symfs, --force, debuginfod), and the
  // recording's own code: the recording host's [vdso] image, which names
  // frames in "[vdso]" mappings, and its embedded binaries (both must
  // outlive the call). Downloads show progress when show_progress.
  BinaryLocatorOptions binaries;
  RecordedCode recorded;
  // The JIT perf maps the recording holds (/tmp/perf-PID.map as the
  // recorder copied it): the pseudo-DSO of a process with one is named
  // from it, not from the file. Must outlive the call.
  std::span<const RecordedPerfMap> perf_maps;
  // For a JIT process the recording holds no map of: the recording's
  // metadata, whose "boot_id" and "jit_uid PID" say whether this host's
  // /tmp/perf-PID.map may name it (PerfMapFallback). nullptr: as a
  // recording without them. (A live view, SymbolCache, reads the user of
  // the running process instead.) Must outlive the call.
  const format::Metadata* recording_facts = nullptr;
  // The recording's jitdump code by pseudo-DSO path ("[jitted-PID]",
  // JitTimeline::code()); nullptr: none. Must outlive the call.
  const std::map<std::string, std::shared_ptr<const JitCode>>* jit_code = nullptr;
  bool srclines = false;
  // Print debuginfod downloads on stderr as a one-line progress (a terminal).
  bool show_progress = false;
  // Where the kernel symbols came from, for --stats: the file's own
  // (sample.data), or what a perf.data reader found on this host.
  std::string kernel_symbols_origin = "recorded kallsyms";
  // Kernel symbols besides the text SymbolizeLocations gets: those
  // covering the kernel's sampled addresses, each with its successor, or
  // why there are none (this host's table, for a perf.data recorded on the
  // running kernel: RecordingFile::host_kallsyms). Empty: none.
  std::function<KallsymsSnapshot(const std::vector<uint64_t>&)> kernel_feed;
  // False: every frame is "[unknown]" and no file is read (for views that
  // print no frames, such as --header-only).
  bool names = true;
};

struct SymbolizeResult {
  // By location: the range of `frames` holding its frames (at least one).
  std::vector<uint32_t> frames_begin;
  std::vector<uint32_t> frames_count;
  std::vector<ResolvedFrame> frames;
  uint64_t mismatched_binaries = 0;
  uint64_t missing_binaries = 0;
  // Path -> where its symbols came from ("recorded path", "build-id dir",
  // "debuginfod", ... or "none: reason"), for --header and --stats.
  format::Metadata symbol_sources;
  std::vector<std::string> warnings;
};

// Lays `per_location` (each location's frames) out as `result`'s
// frames_begin, frames_count and frames.
void FlattenFrames(std::vector<std::vector<ResolvedFrame>>& per_location, SymbolizeResult& result);

// `dso_paths` by DSO id (ProcessTable's); `build_ids` as recorded;
// `kernel_symbols` the file's kallsyms text.
SymbolizeResult SymbolizeLocations(const std::vector<Location>& locations,
                                   const std::vector<std::string>& dso_paths,
                                   const format::Metadata& build_ids,
                                   std::string_view kernel_symbols,
                                   const SymbolizeOptions& options);

// The pseudo-DSO path of a process's JIT code: "/tmp/perf-PID.map".
std::string PerfMapPath(uint32_t pid);
// True for such pseudo-DSOs.
bool IsPerfMapPath(const std::string& path);

// Whether this host's perf map of the recording's JIT process `pid` may
// name its code, and whose file it must be; the error is the note saying
// why not. A pid names the same process only within one boot (after a
// reboot, or in another user's report of an old recording, the map of
// whatever process has the pid now, root's JIT perhaps), so the recording's
// boot must be this one and the map its process's user's ("boot_id",
// "jit_uid PID" in `facts`). Recordings without those facts (made before
// them, perf.data) take only a map of the user running the report. The
// recording's "jit_uid" is only its word (a crafted --no-embed recording
// may claim root's process): the map must also be the reporting user's or
// readable by everyone (PerfMapOptions::shown_to), so that a report run as
// root for others (a service rendering uploaded recordings) shows no one
// a map they could not read.
Result<PerfMapOptions> PerfMapFallback(uint32_t pid, const format::Metadata& facts);
// The pid of a perf map pseudo-DSO's path (IsPerfMapPath), 0 if none.
uint32_t PerfMapPid(std::string_view path);

}  // namespace sample::report
