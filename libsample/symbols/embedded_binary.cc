#include "libsample/symbols/embedded_binary.h"

#include <algorithm>

#include "libsample/symbols/elf_file.h"

namespace sample {
namespace {

// The last element of sorted `items` whose key is at or below `key`.
template <typename T, typename Key>
const T* LastAtOrBelow(const std::vector<T>& items, uint64_t key, Key key_of) {
  auto after = std::upper_bound(items.begin(), items.end(), key,
                                [&](uint64_t k, const T& item) { return k < key_of(item); });
  return after == items.begin() ? nullptr : &*std::prev(after);
}

template <typename T, typename Key>
void SortUnique(std::vector<T>& items, Key key_of) {
  std::stable_sort(items.begin(), items.end(),
                   [&](const T& a, const T& b) { return key_of(a) < key_of(b); });
  items.erase(std::unique(items.begin(), items.end(),
                          [&](const T& a, const T& b) { return key_of(a) == key_of(b); }),
              items.end());
}

}  // namespace

bool CfiRow::operator==(const CfiRow& other) const {
  return start == other.start && end == other.end && rule.usable == other.rule.usable &&
         rule.cfa_base == other.rule.cfa_base && rule.cfa_offset == other.rule.cfa_offset &&
         rule.cfa_plt == other.rule.cfa_plt && rule.signal_frame == other.rule.signal_frame &&
         rule.kind == other.rule.kind && rule.offset == other.rule.offset;
}

const std::vector<AddressFrame>* EmbeddedBinary::FramesAt(uint64_t offset) const {
  const EmbeddedAddress* a =
      LastAtOrBelow(addresses, offset, [](const EmbeddedAddress& e) { return e.offset; });
  return a != nullptr && a->offset == offset ? &a->frames : nullptr;
}

const EmbeddedFunction* EmbeddedBinary::FunctionAt(uint64_t vaddr) const {
  const EmbeddedFunction* f =
      LastAtOrBelow(functions, vaddr, [](const EmbeddedFunction& e) { return e.start; });
  return f != nullptr && vaddr - f->start < std::max<uint64_t>(f->size, 1) ? f : nullptr;
}

const CfiRow* EmbeddedBinary::CfiRowAt(uint64_t vaddr) const {
  const CfiRow* row = LastAtOrBelow(cfi, vaddr, [](const CfiRow& r) { return r.start; });
  return row != nullptr && vaddr < row->end ? row : nullptr;
}

std::optional<uint64_t> EmbeddedBinary::FileOffsetToVaddr(uint64_t offset) const {
  // As ElfSymbols: an executable segment wins where two share the offset.
  for (bool executable : {true, false}) {
    for (const EmbeddedSegment& segment : segments) {
      if (segment.executable != executable || offset < segment.offset) continue;
      if (offset - segment.offset < segment.filesz) return segment.vaddr + offset - segment.offset;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> EmbeddedBinary::LoadBias(uint64_t map_start, uint64_t pgoff) const {
  // As a file's: its segments as ElfLoadLayout reads them.
  ElfLoadLayout layout;
  layout.fixed_address = fixed_address;
  layout.segments.reserve(segments.size());
  for (const EmbeddedSegment& segment : segments) {
    layout.segments.push_back({segment.offset, segment.filesz, segment.vaddr, segment.executable});
  }
  return layout.BiasOf(map_start, pgoff);
}

void EmbeddedBinary::Normalize() {
  SortUnique(addresses, [](const EmbeddedAddress& e) { return e.offset; });
  SortUnique(functions, [](const EmbeddedFunction& e) { return e.start; });
  SortUnique(cfi, [](const CfiRow& r) { return r.start; });
  SortUnique(code, [](const EmbeddedCode& c) { return c.vaddr; });
}

void EmbeddedBinaries::Add(std::shared_ptr<const EmbeddedBinary> binary) {
  // The key views the binary's own path, which lives as long as it does.
  by_path_[binary->path].push_back(binaries_.size());
  binaries_.push_back(std::move(binary));
}

const EmbeddedBinary* EmbeddedBinaries::Find(std::string_view path,
                                             std::string_view build_id) const {
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return nullptr;
  for (size_t i : it->second) {
    if (build_id.empty() || binaries_[i]->build_id == build_id) return binaries_[i].get();
  }
  return nullptr;
}

}  // namespace sample
