// SampleMerger: LoadOptions::merge_samples' folding of the samples that
// differ only in time into one entry each (ProfileSample::samples counts
// them, their periods summed, the first one's time kept), as the loader
// reads them, so that a view that reads no sample's time or order holds
// distinct samples (stacks by thread, CPU and data location), not every
// sample. A sample with group reads stays apart: its reads are its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "libsample/model/profile.h"

namespace sample::report {

class SampleMerger {
 public:
  // Folds samples[from..] (each with its frames by now) into the merged
  // entries before them; `from` is where the last call left the vector.
  // Periods summing past 2^64 saturate, each counted in `saturated`.
  void Merge(std::vector<ProfileSample>& samples, uint64_t& saturated);
  // The latest time of a sample folded in (an entry keeps its first's).
  uint64_t last_time() const { return last_time_; }

 private:
  struct Key {
    uint32_t event, comm, pid, tid, cpu, data, frames_begin, frames_count;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  size_t merged_ = 0;  // samples[0, merged_) are merged entries
  std::unordered_map<Key, uint32_t, KeyHash> index_;
  uint64_t last_time_ = 0;
};

}  // namespace sample::report
