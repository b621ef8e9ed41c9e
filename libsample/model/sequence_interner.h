// SequenceInterner: stores each distinct sequence of 32-bit ids once, in one
// pool, and hands out (begin, count) references to it.
//
// Call stacks repeat: a million samples of a program typically have a few
// thousand distinct stacks, so storing each stack once cuts a profile's
// memory to about its per-sample headers. Owns the pool and the index.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_set>
#include <vector>

namespace sample {

class SequenceInterner {
 public:
  struct Ref {
    uint32_t begin = 0;
    uint32_t count = 0;
  };

  SequenceInterner()
      : pool_(std::make_unique<std::vector<uint32_t>>()),
        index_(16, Hash{pool_.get()}, Equal{pool_.get()}) {}
  // The index's functors point at the pool, which lives on the heap so a
  // move keeps it in place; copies would share it, so there are none.
  SequenceInterner(SequenceInterner&&) = default;
  SequenceInterner& operator=(SequenceInterner&&) = default;
  SequenceInterner(const SequenceInterner&) = delete;
  SequenceInterner& operator=(const SequenceInterner&) = delete;

  Ref Intern(std::span<const uint32_t> sequence) {
    if (auto it = index_.find(sequence); it != index_.end()) return *it;
    const Ref ref{static_cast<uint32_t>(pool_->size()), static_cast<uint32_t>(sequence.size())};
    pool_->insert(pool_->end(), sequence.begin(), sequence.end());
    index_.insert(ref);
    return ref;
  }
  std::span<const uint32_t> Get(Ref ref) const {
    return std::span<const uint32_t>(*pool_).subspan(ref.begin, ref.count);
  }
  size_t distinct() const { return index_.size(); }

 private:
  static size_t HashOf(std::span<const uint32_t> s) {
    uint64_t h = 0xcbf29ce484222325ull ^ s.size();
    for (uint32_t v : s) h = (h ^ v) * 0x100000001b3ull;
    return static_cast<size_t>(h ^ (h >> 32));
  }
  static std::span<const uint32_t> View(const std::vector<uint32_t>* pool, Ref r) {
    return std::span<const uint32_t>(*pool).subspan(r.begin, r.count);
  }
  struct Hash {
    using is_transparent = void;
    const std::vector<uint32_t>* pool;
    size_t operator()(Ref r) const { return HashOf(View(pool, r)); }
    size_t operator()(std::span<const uint32_t> s) const { return HashOf(s); }
  };
  struct Equal {
    using is_transparent = void;
    const std::vector<uint32_t>* pool;
    static bool Same(std::span<const uint32_t> a, std::span<const uint32_t> b) {
      return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
    }
    bool operator()(Ref a, Ref b) const { return Same(View(pool, a), View(pool, b)); }
    bool operator()(Ref a, std::span<const uint32_t> b) const { return Same(View(pool, a), b); }
    bool operator()(std::span<const uint32_t> a, Ref b) const { return Same(a, View(pool, b)); }
  };

  std::unique_ptr<std::vector<uint32_t>> pool_;
  std::unordered_set<Ref, Hash, Equal> index_;
};

}  // namespace sample
