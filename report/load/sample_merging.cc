#include "report/load/sample_merging.h"

#include <algorithm>
#include <bit>

namespace sample::report {

uint64_t SampleMerger::Hash(const Key& k) {
  uint64_t h = (uint64_t{k.frames_begin} << 32 | k.frames_count) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{k.tid} << 32 | k.cpu) * 0xC2B2AE3D27D4EB4Full;
  h ^= (uint64_t{k.event} << 40) ^ (uint64_t{k.comm} << 20) ^ k.data ^ (uint64_t{k.pid} << 52);
  return (h ^ (h >> 29)) * 0x9E3779B97F4A7C15ull;  // the top bits pick the slot
}

SampleMerger::Slot& SampleMerger::Find(const Key& key) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = Hash(key) >> shift_;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.entry == kEmpty || slot.key == key) return slot;
  }
}

void SampleMerger::Grow() {
  std::vector<Slot> old = std::move(slots_);
  const size_t size = old.empty() ? 1024 : old.size() * 2;
  slots_.assign(size, Slot{});
  shift_ = 64 - std::countr_zero(size);
  for (const Slot& slot : old) {
    if (slot.entry != kEmpty) Find(slot.key) = slot;
  }
}

void SampleMerger::Merge(std::vector<ProfileSample>& samples, uint64_t& saturated) {
  size_t kept = merged_;
  for (size_t i = merged_; i < samples.size(); ++i) {
    const ProfileSample& s = samples[i];
    last_time_ = std::max(last_time_, s.time);
    if (s.reads_count == 0) {
      if (2 * (used_ + 1) > slots_.size()) Grow();
      const Key key{s.event, s.comm, s.pid,          s.tid,
                    s.cpu,   s.data, s.frames_begin, s.frames_count};
      Slot& slot = Find(key);
      if (slot.entry == kEmpty) {
        slot.key = key;
        ++used_;
      } else if (ProfileSample& into = samples[slot.entry]; into.samples < UINT32_MAX) {
        into.samples += s.samples;
        // Saturating and counted, as BuildProfile caps each event's sum.
        if (s.period > UINT64_MAX - into.period) {
          into.period = UINT64_MAX;
          ++saturated;
        } else {
          into.period += s.period;
        }
        continue;
      }
      slot.entry = static_cast<uint32_t>(kept);  // a new or full entry: this one takes over
    }
    samples[kept++] = s;
  }
  samples.resize(kept);
  merged_ = kept;
}

}  // namespace sample::report
