#include "report/load/sample_merging.h"

#include <algorithm>
#include <bit>

namespace sample::report {

SampleMerger::Key SampleMerger::KeyOf(const ProfileSample& s) {
  return Key{s.event, s.comm, s.pid, s.tid, s.cpu, s.data, s.frames_begin, s.frames_count};
}

uint32_t SampleMerger::Tag(const Key& k) {
  uint64_t h = (uint64_t{k.frames_begin} << 32 | k.frames_count) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{k.tid} << 32 | k.cpu) * 0xC2B2AE3D27D4EB4Full;
  h ^= (uint64_t{k.event} << 40) ^ (uint64_t{k.comm} << 20) ^ k.data ^ (uint64_t{k.pid} << 52);
  return static_cast<uint32_t>(((h ^ (h >> 29)) * 0x9E3779B97F4A7C15ull) >> 32);
}

SampleMerger::Slot& SampleMerger::Find(const Key& key, uint32_t tag,
                                       const std::vector<ProfileSample>& samples) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = tag >> shift_;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.entry == kEmpty || (slot.tag == tag && KeyOf(samples[slot.entry]) == key)) return slot;
  }
}

void SampleMerger::Grow() {
  std::vector<Slot> old = std::move(slots_);
  const size_t size = old.empty() ? 1024 : old.size() * 2;
  slots_.assign(size, Slot{});
  shift_ = 32 - std::countr_zero(size);
  const size_t mask = size - 1;
  for (const Slot& slot : old) {
    if (slot.entry == kEmpty) continue;
    size_t i = slot.tag >> shift_;
    while (slots_[i].entry != kEmpty) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

void SampleMerger::Merge(std::vector<ProfileSample>& samples, uint64_t& saturated,
                         std::vector<uint32_t>* placed) {
  size_t kept = merged_;
  if (placed != nullptr) placed->clear();
  const auto place = [&](size_t entry) {
    if (placed != nullptr) placed->push_back(static_cast<uint32_t>(entry));
  };
  for (size_t i = merged_; i < samples.size(); ++i) {
    const ProfileSample& s = samples[i];
    last_time_ = std::max(last_time_, s.time);
    if (s.reads_count == 0) {
      if (2 * (used_ + 1) > slots_.size()) {
        if (slots_.size() >= kMaxSlots) {  // 2^31 entries: the rest stay apart
          place(kept);
          samples[kept++] = s;
          continue;
        }
        Grow();
      }
      const Key key = KeyOf(s);
      const uint32_t tag = Tag(key);
      Slot& slot = Find(key, tag, samples);
      if (slot.entry == kEmpty) {
        slot.tag = tag;
        ++used_;
      } else if (ProfileSample& into = samples[slot.entry];
                 into.samples <= UINT32_MAX - s.samples) {
        place(slot.entry);
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
      // A new entry, or one without room for this sample's count: this
      // one takes over.
      slot.entry = static_cast<uint32_t>(kept);
    }
    place(kept);
    samples[kept++] = s;
  }
  samples.resize(kept);
  merged_ = kept;
}

size_t LeafMemo::SlotOf(const Key& key) {
  uint64_t h = key.ip * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t{key.tid} << 32 | key.cpu) * 0xC2B2AE3D27D4EB4Full;
  h ^= uint64_t{key.pid} << 40 ^ key.event;
  return static_cast<size_t>(((h ^ (h >> 29)) * 0x9E3779B97F4A7C15ull) >> 52);  // 12 bits
}

std::optional<uint32_t> LeafMemo::Find(const Key& key) const {
  if (slots_.empty()) return std::nullopt;
  const Slot& slot = slots_[SlotOf(key)];
  if (!slot.valid || !(slot.key == key)) return std::nullopt;
  return slot.index;
}

void LeafMemo::Remember(const Key& key, uint32_t index) {
  if (slots_.empty()) slots_.resize(kSlots);
  slots_[SlotOf(key)] = Slot{key, index, true};
}

void LeafMemo::Remap(size_t from, const std::vector<uint32_t>& placed) {
  for (Slot& slot : slots_) {
    if (!slot.valid || slot.index < from) continue;
    const size_t at = slot.index - from;
    if (at < placed.size()) {
      slot.index = placed[at];
    } else {
      slot.valid = false;
    }
  }
}

bool SampleMerging::JoinRecent(const LeafMemo::Key& key, uint64_t period, uint64_t time,
                               std::vector<ProfileSample>& samples, uint64_t& saturated,
                               uint64_t& frames) {
  // Into merged entries only, one sample at a time as the merger adds them
  // (so periods saturate, and are counted, as they would there).
  const auto index = memo_.Find(key);
  if (!index || *index >= merger_->merged()) return false;
  ProfileSample& into = samples[*index];
  if (into.samples == UINT32_MAX) return false;
  ++into.samples;
  if (period > UINT64_MAX - into.period) {
    into.period = UINT64_MAX;
    ++saturated;
  } else {
    into.period += period;
  }
  memo_last_time_ = std::max(memo_last_time_, time);
  frames += into.frames_count;
  return true;
}

void SampleMerging::Remember(const LeafMemo::Key& key, size_t index) {
  if (index <= UINT32_MAX) memo_.Remember(key, static_cast<uint32_t>(index));
}

void SampleMerging::MergeBatch(std::vector<ProfileSample>& samples, uint64_t& saturated) {
  const size_t from = merger_->merged();
  merger_->Merge(samples, saturated, memo_on_ ? &placed_ : nullptr);
  if (memo_on_) memo_.Remap(from, placed_);
}

void SampleMerging::Release() {
  if (merger_) {
    last_time_ = std::max(merger_->last_time(), memo_last_time_);
    merger_.reset();
  }
  memo_on_ = false;
  memo_.Clear();
  placed_ = {};
}

}  // namespace sample::report
