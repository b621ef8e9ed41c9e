// UnresolvedStacks: the stacks of a recording's samples before they are
// symbolized, as the loader builds them.
//
// A call chain (or a lone ip) is resolved against the process table of its
// moment into frames: each frame is a location (a DSO and an offset in it,
// see report/load/symbolization.h) and the address the kernel reported. Distinct
// locations and frames are few (about the distinct ips), so they are
// numbered once and a stack is an interned sequence of frame ids. Whole
// chains are cached per process, with the process's mappings version, as
// one hash and compare instead of a lookup per frame (measured: those were
// the loader's largest cost); a process's cache goes stale by itself when
// its mappings change. A lone ip (--annotate's leaf-only load) is looked
// up first in a small direct-mapped table by (pid, ip, mappings version):
// the per-process map's lookup was 10% of that load. Owns the locations,
// frames, stacks and caches.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "libsample/model/process_table.h"
#include "libsample/model/sequence_interner.h"
#include "libsample/perf/perf_record.h"
#include "report/load/symbolization.h"

namespace sample::report {

// One frame as a sample saw it: where it resolved and the address the
// kernel reported (a return address for callers).
struct SeenFrame {
  uint32_t location;
  bool return_address;
  uint64_t ip;
  bool operator==(const SeenFrame&) const = default;
};

class UnresolvedStacks {
 public:
  using StackRef = SequenceInterner::Ref;

  // The stack of `callchain` (with the kernel's context markers) in `pid`,
  // or, when the chain is empty, of `ip` alone. The first address after
  // each context marker is where that context was interrupted; the others
  // are return addresses, looked up at address - 1 (the call). A return
  // address in no code mapping of the process is no caller (a frame-pointer
  // walk through code without frame pointers reads junk words there): the
  // chain ends before it, and last_chain_ended() says so. JIT code a
  // jitdump named (ProcessTable::FindJitCode) resolves to its jitted-code
  // pseudo-DSO; other JIT code (anonymous executable mappings) to the
  // process's /tmp/perf-PID.map pseudo-DSO, interned in `processes`.
  StackRef StackOf(ProcessTable& processes, uint32_t pid, uint64_t ip, const U64List& callchain);

  // Whether the last StackOf's chain ended at a caller in no code mapping.
  bool last_chain_ended() const { return last_ended_; }

  std::span<const uint32_t> Frames(StackRef stack) const { return stacks_.Get(stack); }
  const SeenFrame& frame(uint32_t id) const { return frames_[id]; }
  const std::vector<Location>& locations() const { return locations_; }

  // Frees the lookup indexes and caches: after this, StackOf must not be
  // called, and the stacks, frames and locations stay readable.
  void ReleaseIndexes();

  // Drops the per-process chain caches and the lone-ip table (a live view,
  // now and then: the processes of a machine come and go, and an exited
  // one's cache would stay for good); they fill again as chains come.
  void ClearChainCaches();

  // Addresses in no mapping become one location and frame ("[unknown]"),
  // not one each: a live view that runs for hours would otherwise keep
  // every junk word a frame-pointer walk through code without frame
  // pointers reads (sample-top).
  void set_collapse_unknown(bool on) { collapse_unknown_ = on; }

 private:
  struct LocationHash {
    size_t operator()(const Location& l) const;
  };
  struct SeenFrameHash {
    size_t operator()(const SeenFrame& f) const;
  };
  struct CachedChain {
    std::vector<std::byte> chain;
    StackRef stack;
    bool ended = false;  // at a caller in no code mapping
  };
  struct ProcessCache {
    uint64_t mappings_version = 0;
    std::unordered_map<uint64_t, CachedChain> chains;  // by hash of the chain
  };
  // A lone ip's stack in one process at one mappings version.
  struct CachedLeaf {
    uint64_t ip = 0;
    uint64_t mappings_version = 0;
    uint32_t pid = 0;
    bool valid = false;
    StackRef stack;
  };
  static constexpr size_t kLeafSlots = 4096;

  // kNoFrame for a return address in no code mapping (the chain ends).
  static constexpr uint32_t kNoFrame = UINT32_MAX;
  uint32_t LocationId(ProcessTable& processes, uint32_t pid, uint64_t ip, bool return_address);
  uint32_t FrameId(ProcessTable& processes, uint32_t pid, uint64_t ip, bool return_address);

  std::vector<Location> locations_;
  std::unordered_map<Location, uint32_t, LocationHash> location_ids_;
  std::vector<SeenFrame> frames_;
  std::unordered_map<SeenFrame, uint32_t, SeenFrameHash> frame_ids_;
  SequenceInterner stacks_;
  std::unordered_map<uint32_t, ProcessCache> caches_;  // by pid
  // The cache of the last pid asked for, current while no mappings changed
  // (samples come in runs of one process: two lookups a sample saved).
  uint32_t last_pid_ = 0;
  ProcessCache* last_cache_ = nullptr;
  uint64_t last_cache_check_ = 0;  // ProcessTable::last_mappings_version() then
  std::vector<CachedLeaf> leaves_;  // kLeafSlots once a lone ip comes
  std::vector<uint32_t> scratch_;
  bool collapse_unknown_ = false;
  bool last_ended_ = false;
};

}  // namespace sample::report
