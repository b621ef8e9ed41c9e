// JitDumps: copies the jitdumps of recorded processes (jit-PID.dump, what
// node --perf-prof, the JVM's perf agents, .NET, CPython's -X perf_jit and
// Wasmtime write) into the recording as kJitDump chunks, so their JIT code
// keeps its names, lines and bytes after the dump is deleted, on another
// machine, and without a `perf inject --jit` pass.
//
// A writer announces its dump by mapping it executable, which the kernel
// reports as an MMAP2 of a file named jit-<pid>.dump. The dump is opened
// then, through the process's mount namespace (ProcessFiles) and checked to
// be the inode that was mapped: the open fd keeps the file readable when
// the process or anyone deletes it before the recording ends. (If it
// cannot be opened then, it is tried again when the process exits and at
// the close.) When the process exits its dump is complete: it is read
// into memory then and its fd closed, so a system-wide recording of many
// short-lived JITs holds no fd per process (hundreds of them ran out of
// RLIMIT_NOFILE, which the embedding of binaries at the close needs too)
// and a deleted dump frees its disk. At most JitDumpLimits::max_open stay open: past
// that the oldest-opened is read into memory as it is then and closed
// (what it names stays named, even if it is deleted later); at the close
// it is opened again and read whole if its file is still there, the copy
// stored if not (said in the closing notes). Not opening more would have
// lost whole dumps deleted before their process exits instead. The
// dumps of live processes are read at the close of each recording file,
// as they are then (a dump whose writer still runs ends in a torn record,
// which readers accept); every dump is cut into parts of kJitDumpPartSize
// on record boundaries, up to kMaxJitDumpSize per dump and max_total_bytes
// for all of them (the copies held and what a close reads); what is left
// out is said in the closing notes. The process mapping a file does not
// make it the process's: dumps live in /tmp or a shared directory, where
// another user can rewrite one anyone may write, or, in a mount namespace
// of their own, bind-mount any file over the path once the process mapped
// it. So a dump is taken only as a perf map is (CheckPerfMapFile): owned
// by the process's real uid (root's only for root's processes), writable
// by no one else, a regular file not reached through a link; the note
// says why one was not. Owns the fds and the copies. One thread (the
// recorder's main one).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/unique_fd.h"
#include "record/embed/process_files.h"

namespace sample::record {

// What the copying stored, for the closing line.
struct JitDumpsCopied {
  size_t dumps = 0;
  size_t parts = 0;
  uint64_t bytes = 0;
};

// The bounds of JitDumps (tests make them small).
struct JitDumpLimits {
  // Dumps held open at once (the process's fd limit is often 1024).
  size_t max_open = 64;
  // All dumps together: held in memory, and queued to the writer at a
  // close (the report keeps 1 GiB for all embedded data).
  uint64_t max_total_bytes = uint64_t{512} << 20;
};

class JitDumps {
 public:
  explicit JitDumps(JitDumpLimits limits = {}) : limits_(limits) {}

  // An MMAP2 of `path` by process `pid`, `inode` as the record gives it (0
  // when not known). Only jitdump file names are taken.
  void NoteMapping(uint32_t pid, std::string_view path, uint64_t inode, const ProcessFiles& files);
  // Process `pid` exited: its dump (opened now if it was not) is read into
  // memory and closed.
  void NoteExit(uint32_t pid, const ProcessFiles& files);
  // Submits every dump as kJitDump chunks to `writer` (again for each file
  // of a flight recorder); `notes` gets what was left out and why.
  JitDumpsCopied Submit(format::SampleFileWriter& writer, const ProcessFiles& files,
                        std::vector<std::string>* notes);

  size_t processes() const { return dumps_.size(); }
  size_t open_dumps() const { return open_; }
  uint64_t held_bytes() const { return held_bytes_; }

 private:
  struct Dump {
    std::string path;  // as the process named it
    uint64_t inode = 0;
    std::optional<uid_t> uid;  // the process's, read at its mapping; nullopt: gone
    UniqueFd fd;
    uint64_t opened = 0;  // when it was opened, in opens: the oldest goes first
    bool exited = false;
    bool held = false;             // `bytes` is its copy, read at its exit or when evicted
    std::vector<std::byte> bytes;  // whole records
    std::string note;              // why it could not be opened
    std::vector<std::string> cut;  // what its copy left out
  };
  void Open(uint32_t pid, Dump& dump, const ProcessFiles& files);
  void Close(Dump& dump);
  // Reads `dump` into memory and closes it.
  void Hold(Dump& dump);
  // Holds the oldest-opened dump, making room for another fd.
  void HoldOldest();
  // Drops the copy and fd of the dump before a new one of its process.
  void Release(Dump& dump);
  // Whole records of the open `dump` from its start, up to `limit` bytes;
  // `notes` gets what was left out.
  std::vector<std::byte> ReadWhole(const Dump& dump, uint64_t limit,
                                   std::vector<std::string>* notes) const;
  uint64_t BytesLeft() const;

  JitDumpLimits limits_;
  std::unordered_map<uint32_t, Dump> dumps_;  // by pid: the latest dump mapped
  size_t open_ = 0;
  uint64_t opens_ = 0;
  uint64_t held_bytes_ = 0;     // of the copies
  uint64_t closing_bytes_ = 0;  // read from fds by the Submit under way
};

}  // namespace sample::record
