// JitMaps: copies the perf maps (/tmp/perf-PID.map) of recorded processes
// that run JIT code into the recording, so their frames keep names after
// the map is gone (a reboot, tmp cleaning, another machine).
//
// A process is taken for a JIT when it maps anonymous executable memory;
// its real uid is read then (ProcessFiles::Uid). Its map is taken when it
// exits (its EXIT record drained: the file is opened then, and read when
// the file being written closes) or when the recording ends, whichever
// comes first, through the process's mount namespace and under the name
// it gives the file (its pid in its own pid namespace), as ProcessFiles
// opens it. Only a map the process's own user could have written is
// taken (CheckPerfMapFile: owned by that uid, root's only for a root
// process, a regular file not reached through a link, writable by no one
// else): anyone can write /tmp, and a user can bind-mount any file over
// the path inside a mount namespace of their own, which root's recorder
// would otherwise copy. Maps are stored up to limits.max_map_bytes each
// and limits.max_total_bytes for all (pid order decides which), cut at a
// line's end; a map that repeats itself past what a reader accepts of a
// chunk (kMaxCompressionRatio) keeps only its first MiB. What was left out
// is said in the closing notes. Owns the copies. One thread (the
// recorder's main one).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/symbols/embedded_binary.h"
#include "record/embed/process_files.h"

namespace sample::record {

// The bounds of JitMaps (tests make them small).
struct JitMapLimits {
  // Under a chunk's limit (kWriterMaxChunkRawSize) with its header.
  uint64_t max_map_bytes = (uint64_t{64} << 20) - 4096;
  // All maps of a file together: held in memory at the close, and queued
  // to the writer (30 JITs each linking one 60 MB map took 1.93 GB and
  // 23.6 s without it). The report keeps 1 GiB for all embedded data.
  uint64_t max_total_bytes = uint64_t{256} << 20;
};

class JitMaps {
 public:
  explicit JitMaps(JitMapLimits limits = {}) : limits_(limits) {}

  // An executable mapping of `path` in process `pid`.
  void NoteMapping(uint32_t pid, std::string_view path, const ProcessFiles& files);
  // Process `pid` exited: its map is opened now.
  void NoteExit(uint32_t pid, const ProcessFiles& files);
  // Every map found, by pid, for a file being closed: those of exited
  // processes as they were at the exit, the others read now (again, for
  // each file of a flight recorder). `notes` gets why a map was left out.
  // Each map is handed to `take` as soon as it is read, so that only one
  // map's text is held at a time (the total may be 256 MiB).
  void Collect(const ProcessFiles& files, std::vector<std::string>* notes,
               const std::function<void(RecordedPerfMap&&)>& take);
  // The same, kept in a vector (tests).
  std::vector<RecordedPerfMap> Collect(const ProcessFiles& files, std::vector<std::string>* notes);
  // What a report needs to read a map of this host itself (recordings
  // without copies: --no-embed): "boot_id" and, per JIT process,
  // "jit_uid PID" (its real uid), for a kMetadata chunk at the close.
  format::Metadata Facts() const;

  size_t processes() const { return jits_.size(); }

 private:
  struct Jit {
    uint32_t namespace_pid = 0;
    std::optional<uid_t> uid;  // nullopt: gone before it was read
    bool exited = false;
    UniqueFd fd;       // the map, once opened and checked
    std::string note;  // why it was not taken, or only in part
  };
  void Open(uint32_t pid, Jit& jit, const ProcessFiles& files);
  // Up to `limit` bytes of the map opened.
  std::string Read(Jit& jit, uint64_t limit);

  JitMapLimits limits_;
  std::unordered_map<uint32_t, Jit> jits_;
};

// How many leading bytes of `text` a kPerfMap chunk may hold so that its
// reader accepts it whatever the writer's zstd level: all of it when it
// compresses at most kMaxCompressionRatio / 8 to one beyond the first MiB
// (measured at level 1; higher levels gain far less than 8x on text that
// a map's lines make), else its first MiB to a line's end.
size_t PerfMapPayloadPrefix(std::string_view text);

}  // namespace sample::record
