// JitMaps: copies the perf maps (/tmp/perf-PID.map) of recorded processes
// that run JIT code into the recording, so their frames keep names after
// the map is gone (a reboot, tmp cleaning, another machine).
//
// A process is taken for a JIT when it maps anonymous executable memory.
// Its map is taken when it exits (its EXIT record drained: the file is
// opened then, and read when the file being written closes) or when the
// recording ends, whichever comes first, through the process's mount
// namespace and under the name it gives the file (its pid in its own pid
// namespace), as ProcessFiles opens it. As the report does with maps it
// reads, a map owned by someone other than the process's user or root is
// not taken (anyone can write /tmp: it would put names on others' code).
// Maps are stored whole, up to kMaxMapBytes each. Owns the copies. One
// thread (the recorder's main one).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libsample/symbols/embedded_binary.h"
#include "record/facts/process_files.h"

namespace sample::record {

class JitMaps {
 public:
  // Under a chunk's limit (kWriterMaxChunkRawSize) with its header.
  static constexpr uint64_t kMaxMapBytes = (uint64_t{64} << 20) - 4096;

  // An executable mapping of `path` in process `pid`.
  void NoteMapping(uint32_t pid, std::string_view path, const ProcessFiles& files);
  // Process `pid` exited: its map is read now.
  void NoteExit(uint32_t pid, const ProcessFiles& files);
  // Every map found, by pid, for a file being closed: those of exited
  // processes as they were at the exit, the others read now (again, for
  // each file of a flight recorder). `notes` gets why a map was left out.
  std::vector<RecordedPerfMap> Collect(const ProcessFiles& files, std::vector<std::string>* notes);

  size_t processes() const { return jits_.size(); }

 private:
  struct Jit {
    uint32_t namespace_pid = 0;
    uid_t uid = 0;
    bool exited = false;
    UniqueFd fd;       // the map, once opened and checked
    std::string note;  // why it was not taken, or only in part
  };
  void Open(uint32_t pid, Jit& jit, const ProcessFiles& files);
  std::string Read(Jit& jit);

  std::unordered_map<uint32_t, Jit> jits_;
};

}  // namespace sample::record
