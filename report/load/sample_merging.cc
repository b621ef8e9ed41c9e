#include "report/load/sample_merging.h"

#include <algorithm>

namespace sample::report {

size_t SampleMerger::KeyHash::operator()(const Key& k) const {
  uint64_t h = (uint64_t{k.frames_begin} << 32 | k.frames_count) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{k.tid} << 32 | k.cpu) * 0xC2B2AE3D27D4EB4Full;
  h ^= (uint64_t{k.event} << 40) ^ (uint64_t{k.comm} << 20) ^ k.data ^ (uint64_t{k.pid} << 52);
  return static_cast<size_t>(h ^ (h >> 29));
}

void SampleMerger::Merge(std::vector<ProfileSample>& samples, uint64_t& saturated) {
  size_t kept = merged_;
  for (size_t i = merged_; i < samples.size(); ++i) {
    const ProfileSample& s = samples[i];
    last_time_ = std::max(last_time_, s.time);
    if (s.reads_count == 0) {
      const Key key{s.event, s.comm, s.pid,          s.tid,
                    s.cpu,   s.data, s.frames_begin, s.frames_count};
      auto [it, added] = index_.try_emplace(key, static_cast<uint32_t>(kept));
      ProfileSample& into = samples[it->second];
      if (!added && into.samples < UINT32_MAX) {
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
      it->second = static_cast<uint32_t>(kept);  // a full entry: the next takes over
    }
    samples[kept++] = s;
  }
  samples.resize(kept);
  merged_ = kept;
}

}  // namespace sample::report
