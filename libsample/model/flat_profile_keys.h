// The keys BuildFlatProfile groups samples by, and KeyMaker, which fills
// them from a sample as the sort keys ask.
//
// An EntryKey names one flat-profile entry: the sort keys' fields, kAny in
// the fields the keys leave out. A SampleClassKey names a class of samples
// that agree on everything the entries and trees look at: the sort keys'
// per-sample fields and the interned stack, which stands in for the
// per-frame fields (dso, symbol, source line). Both are small values with
// their own equality and hash for the builder's hash maps.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "libsample/model/flat_profile.h"
#include "libsample/model/profile.h"

namespace sample {

// Mixes 32-bit fields into one hash (FNV-style multiply, folded at the end).
inline size_t HashFields(std::initializer_list<uint32_t> fields) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (uint32_t v : fields) h = (h ^ v) * 0x100000001B3ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

struct EntryKey {
  uint32_t comm = FlatEntry::kAny;
  uint32_t pid = FlatEntry::kAny;
  uint32_t tid = FlatEntry::kAny;
  uint32_t cpu = FlatEntry::kAny;
  uint32_t dso = FlatEntry::kAny;
  uint32_t function = FlatEntry::kAny;  // the symbol: shared by all its lines
  uint32_t srcline = FlatEntry::kAny;
  uint32_t data_dso = FlatEntry::kAny;
  uint32_t data = FlatEntry::kAny;
  bool operator==(const EntryKey&) const = default;
};

struct EntryKeyHash {
  size_t operator()(const EntryKey& k) const {
    return HashFields(
        {k.comm, k.pid, k.tid, k.cpu, k.dso, k.function, k.srcline, k.data_dso, k.data});
  }
};

struct SampleClassKey {
  uint32_t comm = FlatEntry::kAny;
  uint32_t pid = FlatEntry::kAny;
  uint32_t tid = FlatEntry::kAny;
  uint32_t cpu = FlatEntry::kAny;
  uint32_t data = FlatEntry::kAny;
  uint32_t frames_begin = 0;  // the interned stack (ProfileSample's fields)
  uint32_t frames_count = 0;
  bool operator==(const SampleClassKey&) const = default;
};

struct SampleClassKeyHash {
  size_t operator()(const SampleClassKey& k) const {
    return HashFields({k.comm, k.pid, k.tid, k.cpu, k.data, k.frames_begin, k.frames_count});
  }
};

// Fills keys with the fields the sort keys name; kAny elsewhere, so that
// samples differing only in other fields share an entry.
class KeyMaker {
 public:
  KeyMaker(const Profile& profile, const std::vector<SortKey>& keys) : profile_(profile) {
    for (SortKey k : keys) use_[static_cast<size_t>(k)] = true;
  }
  // The entry of `function` (one of the sample's frames) for sample `s`;
  // `holder` is the frame of the function symbol holding its address
  // (`function` itself unless it is an inlined call).
  EntryKey Entry(const ProfileSample& s, uint32_t function, uint32_t holder) const {
    const Function& f = profile_.function(function);
    const uint32_t row = use(SortKey::kInline) ? f.symbol
                         : use(SortKey::kSym)  ? profile_.function(holder).symbol
                                               : FlatEntry::kAny;
    return EntryKey{Pick(SortKey::kComm, s.comm),
                    Pick(SortKey::kPid, s.pid),
                    Pick(SortKey::kTid, s.tid),
                    Pick(SortKey::kCpu, s.cpu),
                    Pick(SortKey::kDso, f.dso),
                    row,
                    Pick(SortKey::kSrcline, f.srcline),
                    use(SortKey::kDsoDaddr) ? profile_.data_location(s.data).dso : FlatEntry::kAny,
                    Pick(SortKey::kSymbolDaddr, s.data)};
  }
  SampleClassKey Class(const ProfileSample& s) const {
    const bool data = use(SortKey::kDsoDaddr) || use(SortKey::kSymbolDaddr);
    return SampleClassKey{Pick(SortKey::kComm, s.comm),
                          Pick(SortKey::kPid, s.pid),
                          Pick(SortKey::kTid, s.tid),
                          Pick(SortKey::kCpu, s.cpu),
                          data ? s.data : FlatEntry::kAny,
                          s.frames_begin,
                          s.frames_count};
  }

 private:
  bool use(SortKey k) const { return use_[static_cast<size_t>(k)]; }
  uint32_t Pick(SortKey k, uint32_t value) const { return use(k) ? value : FlatEntry::kAny; }
  const Profile& profile_;
  std::array<bool, static_cast<size_t>(SortKey::kCount)> use_{};
};

}  // namespace sample
