// AllocEvents: the loader's side of an --alloc recording
// (record/alloc/alloc_probes.h). Its events are tracepoints named
// alloc:FUNC and alloc:FUNC:return whose raw payloads hold the fields
// the recorder fetched; which are there says what the call does:
//   size [nmemb] [align]  allocates size (x nmemb) bytes; its return's ptr
//                         is the block
//   ptr size [nmemb]      realloc: also ends the block at ptr
//   memptr align size     posix_memalign: allocates, but its block is
//                         stored where no probe can read it (counted in
//                         alloc-bytes and alloc-calls, never tracked)
//   ptr                   frees ptr
// Their samples become four pseudo-events (Recording::alloc_event and the
// three after it), each sample with the call chain of the allocating call:
//   alloc-bytes  every allocation, weighted by its size
//   alloc-calls  every allocation, weight 1
//   leak-bytes   the blocks never freed, by size
//   peak-bytes   the blocks live when the live total peaked, by size
// With -c N (every Nth allocating call recorded) each weight is N times
// its own: the figures are then estimates.
// The return and free samples only pair (Allocations) and are not kept.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/recording_file.h"
#include "libsample/model/profile.h"
#include "libsample/perf/event_table.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/user_regs.h"
#include "report/load/allocations.h"
#include "report/load/recording.h"

namespace sample::report {

// Whether `reader` is an --alloc recording: it has alloc: tracepoints
// whose stored formats name their fields (sample-top's recordings in
// memory store none: there the calls stay plain tracepoint samples, as a
// call's return may come in another refresh than the call).
bool HasAllocEvents(const format::RecordingFile& reader);

class AllocEvents {
 public:
  // The pseudo-events get ids from `first_event` (Recording::alloc_event).
  // An --alloc recording's, with `alloc_event` set; nullopt for others.
  static std::optional<AllocEvents> Of(const format::RecordingFile& reader,
                                       std::optional<uint32_t>& alloc_event);
  // When the probes were all on: from the first kControl entry when it
  // switches on, to the last when it switches everything off (written
  // when attaching to a running process, whose probes are switched on
  // and off one by one). The calls and frees outside are left out: their
  // partners (a block's allocation, the calloc of a malloc's round) may
  // be. A return is kept: it pairs with a call inside, or with nothing.
  struct AllOn {
    uint64_t from_ns = 0;
    uint64_t to_ns = UINT64_MAX;
  };
  // `arch`: the recording's, whose stack pointer the calls' samples hold.
  AllocEvents(const std::vector<EventDesc>& events,
              const std::vector<format::TraceFormatEntry>& formats, uint32_t first_event, Arch arch,
              AllOn all_on);

  // A sample of event `sample.event` about to be added as samples[index]:
  // false when it is not kept (a return, a free, a payload without its
  // fields); a kept allocation becomes an alloc-bytes sample, weighted
  // once its return is seen.
  bool Keep(ProfileSample& sample, size_t index, const SampleRecord& record,
            const perf_event_attr& attr, std::vector<ProfileSample>& samples);
  void Exited(uint32_t tid) { allocations_.Exited(tid); }

  // After the last record: the calls that made no block are marked
  // dropped (event kDroppedEvent, for the loader to remove), and the
  // alloc-calls, leak-bytes and peak-bytes samples appended. The stats
  // go into `stats`.
  void Finish(std::vector<ProfileSample>& samples, AllocLoadStats& stats);

  static constexpr uint32_t kDroppedEvent = UINT32_MAX;

 private:
  enum class Role : uint8_t {
    kNone,
    kAllocate,
    kReallocate,
    kUntracked,
    kReturn,
    kFree,
    kUnmap,  // munmap: a ptr and a len
  };
  struct Fields {
    Role role = Role::kNone;
    uint32_t function = 0;                     // the entry event's index, for a return too
    std::optional<uint32_t> size, nmemb, ptr;  // payload offsets of u64 fields
  };
  std::vector<Fields> events_;
  uint32_t first_event_ = 0;
  Arch arch_;
  Allocations allocations_;
  uint64_t untracked_ = 0, untracked_bytes_ = 0;
  uint64_t max_weight_ = 1;                       // -c N: a recorded allocation stands for N
  std::unordered_map<size_t, uint64_t> weights_;  // the calls' weights that are not 1
  std::vector<uint64_t> calls_;                   // samples by event index
  uint64_t malformed_ = 0;
  AllOn all_on_;
  uint64_t outside_on_ = 0;  // samples outside all_on_
};

}  // namespace sample::report
