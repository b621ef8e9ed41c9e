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
// the close.) The file is read at the close of each recording file, as it
// is then (a dump whose writer still runs ends in a torn record, which
// readers accept), cut into parts of kJitDumpPartSize on record boundaries,
// up to kMaxJitDumpSize per dump; what is left out is said in the closing
// notes. The process mapped the file itself, so, unlike a perf map found
// by its name in /tmp, its owner is not checked. Owns the fds. One thread
// (the recorder's main one).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/unique_fd.h"
#include "record/facts/process_files.h"

namespace sample::record {

// What the copying stored, for the closing line.
struct JitDumpsCopied {
  size_t dumps = 0;
  size_t parts = 0;
  uint64_t bytes = 0;
};

class JitDumps {
 public:
  // An MMAP2 of `path` by process `pid`, `inode` as the record gives it (0
  // when not known). Only jitdump file names are taken.
  void NoteMapping(uint32_t pid, std::string_view path, uint64_t inode, const ProcessFiles& files);
  // Process `pid` exited: a dump not yet open is opened now.
  void NoteExit(uint32_t pid, const ProcessFiles& files);
  // Submits every dump as kJitDump chunks to `writer` (again for each file
  // of a flight recorder); `notes` gets what was left out and why.
  JitDumpsCopied Submit(format::SampleFileWriter& writer, const ProcessFiles& files,
                        std::vector<std::string>* notes);

  size_t processes() const { return dumps_.size(); }

 private:
  struct Dump {
    std::string path;  // as the process named it
    uint64_t inode = 0;
    UniqueFd fd;
    std::string note;  // why it could not be opened
  };
  void Open(uint32_t pid, Dump& dump, const ProcessFiles& files);
  // Reads the dump and submits its parts; false when nothing could be read.
  bool SubmitDump(uint32_t pid, Dump& dump, format::SampleFileWriter& writer,
                  JitDumpsCopied& copied, std::vector<std::string>* notes);

  std::unordered_map<uint32_t, Dump> dumps_;  // by pid: the latest dump mapped
};

}  // namespace sample::record
