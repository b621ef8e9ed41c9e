// SampleMerger: LoadOptions::merge_samples' folding of the samples that
// differ only in time into one entry each (ProfileSample::samples counts
// them, their periods summed, the first one's time kept), as the loader
// reads them, so that a view that reads no sample's time or order holds
// distinct samples (stacks by thread, CPU and data location), not every
// sample. A sample with group reads stays apart: its reads are its own.
//
// The index is an open-addressed table (linear probing, at most half
// full) of 8-byte slots: an entry's index and 32 bits of its key's hash,
// the key itself read from the entry. Every sample of a recording looks it
// up, and a node-based map's lookup was 9% of an annotate's load of a
// million samples (and took ~70 bytes an entry, not 16-32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "libsample/model/profile.h"

namespace sample::report {

class SampleMerger {
 public:
  // Folds samples[from..] (each with its frames by now) into the merged
  // entries before them; `from` is where the last call left the vector.
  // Periods summing past 2^64 saturate, each counted in `saturated`.
  // `placed`, when given, is set to where each of samples[from..] went:
  // the index of its entry.
  void Merge(std::vector<ProfileSample>& samples, uint64_t& saturated,
             std::vector<uint32_t>* placed = nullptr);
  // samples[0, merged()) are merged entries, which stay where they are.
  size_t merged() const { return merged_; }
  // The latest time of a sample folded in (an entry keeps its first's).
  uint64_t last_time() const { return last_time_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static constexpr size_t kMaxSlots = size_t{1} << 32;  // a tag's bits place it
  struct Key {
    uint32_t event, comm, pid, tid, cpu, data, frames_begin, frames_count;
    bool operator==(const Key&) const = default;
  };
  struct Slot {
    uint32_t entry = kEmpty;  // index of the merged entry in the samples
    uint32_t tag = 0;         // the key's hash, top 32 bits: its place too
  };
  static Key KeyOf(const ProfileSample& s);
  static uint32_t Tag(const Key& k);
  // The slot of `key`: its entry's, or the empty one to fill.
  Slot& Find(const Key& key, uint32_t tag, const std::vector<ProfileSample>& samples);
  void Grow();

  size_t merged_ = 0;  // samples[0, merged_) are merged entries
  std::vector<Slot> slots_;
  size_t used_ = 0;
  int shift_ = 32;  // 32 - log2(slots_.size()): a tag's top bits pick its slot
  uint64_t last_time_ = 0;
};

// LeafMemo: the merged entry of a sample without chains (--annotate's
// load) by what decides its entry: the thread, CPU, event and ip, while no
// process's mappings and no thread's name changed. A sample like one seen
// lately is added to that entry at once, one lookup in place of the
// comm's, the stack's and the merger's (together ~16% of an annotate of a
// million samples). Direct-mapped: a newer key takes an older one's slot.
// The loader adds to merged entries only (a key first seen in a batch
// points at a sample not merged yet until the batch's Merge), so every
// sum is made as the merger would make it.
class LeafMemo {
 public:
  struct Key {
    uint64_t ip = 0;
    uint32_t pid = 0;
    uint32_t tid = 0;
    uint32_t cpu = 0;
    uint32_t event = 0;
    uint64_t mappings_version = 0;  // ProcessTable::last_mappings_version()
    uint64_t comms_version = 0;     // ProcessTable::comms_version()
    bool operator==(const Key&) const = default;
  };
  // The samples index of `key`'s entry (or of a sample not merged yet).
  std::optional<uint32_t> Find(const Key& key) const;
  void Remember(const Key& key, uint32_t index);
  // After SampleMerger::Merge(samples, ..., &placed) from `from`: the
  // indexes at or past it become the entries those samples went into.
  void Remap(size_t from, const std::vector<uint32_t>& placed);
  void Clear() { slots_.clear(); }

 private:
  static constexpr size_t kSlots = 4096;
  struct Slot {
    Key key;
    uint32_t index = 0;
    bool valid = false;
  };
  static size_t SlotOf(const Key& key);
  std::vector<Slot> slots_;
};

// The loader's merging stage: SampleMerger over each batch and, in a load
// without chains, unwinding or toggles (--annotate), the LeafMemo that
// joins a sample like a recent one to its entry at once. Owns both, and the
// latest time of a sample they took in.
class SampleMerging {
 public:
  // Merging on; `memo`: samples like recent ones join their entries at once.
  void Start(bool memo) {
    merger_.emplace();
    memo_on_ = memo;
  }
  bool on() const { return merger_.has_value(); }
  bool memo_on() const { return memo_on_; }
  // Adds one sample of `period` at `time` to the merged entry of a sample
  // like it seen lately (`key`): true when it was taken (`frames` counts
  // the entry's frames again, `saturated` a period that hit its ceiling).
  bool JoinRecent(const LeafMemo::Key& key, uint64_t period, uint64_t time,
                  std::vector<ProfileSample>& samples, uint64_t& saturated, uint64_t& frames);
  // The sample at `index` of `samples` is the one to join samples like it.
  void Remember(const LeafMemo::Key& key, size_t index);
  // After a batch: its new samples merged into their entries.
  void MergeBatch(std::vector<ProfileSample>& samples, uint64_t& saturated);
  // Loading is over: the state goes, the latest time stays.
  void Release();
  // The latest time of a sample merged into an entry.
  uint64_t last_time() const { return last_time_; }

 private:
  std::optional<SampleMerger> merger_;
  bool memo_on_ = false;
  LeafMemo memo_;
  std::vector<uint32_t> placed_;  // Merge's, for the memo's Remap
  uint64_t memo_last_time_ = 0;   // the latest time of a sample the memo added
  uint64_t last_time_ = 0;        // kept past Release
};

}  // namespace sample::report
