#include "libsample/symbols/known_frames.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

namespace sample {
namespace {

// Whether `next` is `frames` one byte further on.
bool Continues(const std::vector<AddressFrame>& frames, const std::vector<AddressFrame>& next) {
  if (frames.size() != next.size()) return false;
  for (size_t i = 0; i < frames.size(); ++i) {
    const AddressFrame& a = frames[i];
    const AddressFrame& b = next[i];
    const bool offsets = a.symbol_offset == UINT64_MAX
                             ? b.symbol_offset == UINT64_MAX
                             : a.symbol_offset < UINT64_MAX - 1 && b.symbol_offset == a.symbol_offset + 1;
    if (!offsets || a.name != b.name || a.file != b.file || a.line != b.line ||
        a.inlined != b.inlined) {
      return false;
    }
  }
  return true;
}

}  // namespace

KnownFrames::KnownFrames(std::vector<Range> ranges, std::vector<Run> runs,
                         std::vector<Frame> frames, std::string strings)
    : ranges_(std::move(ranges)),
      runs_(std::move(runs)),
      frames_(std::move(frames)),
      strings_(std::move(strings)) {}

bool KnownFrames::Covers(uint64_t offset) const {
  auto next = std::upper_bound(ranges_.begin(), ranges_.end(), offset,
                               [](uint64_t o, const Range& r) { return o < r.begin; });
  return next != ranges_.begin() && offset < std::prev(next)->end;
}

std::optional<std::vector<AddressFrame>> KnownFrames::At(uint64_t offset) const {
  if (!Covers(offset)) return std::nullopt;
  // A range begins with a run, so the run found is inside the range.
  auto next = std::upper_bound(runs_.begin(), runs_.end(), offset,
                               [](uint64_t o, const Run& r) { return o < r.offset; });
  const Run& run = *std::prev(next);
  const uint64_t delta = offset - run.offset;
  std::vector<AddressFrame> out;
  out.reserve(run.frame_count);
  for (uint32_t i = 0; i < run.frame_count; ++i) {
    const Frame& f = frames_[run.first_frame + i];
    out.push_back(AddressFrame{strings_.data() + f.name, strings_.data() + f.file, f.line,
                               f.inlined != 0,
                               f.symbol_offset == UINT64_MAX ? UINT64_MAX : f.symbol_offset + delta});
  }
  return out;
}

uint32_t KnownFrames::Intern(const std::string& text) {
  if (text.empty()) return 0;
  if (interned_.empty()) {
    for (size_t at = 1; at < strings_.size(); at += std::strlen(strings_.data() + at) + 1) {
      interned_.try_emplace(std::string(strings_.data() + at), static_cast<uint32_t>(at));
    }
  }
  auto [it, added] = interned_.try_emplace(text, static_cast<uint32_t>(strings_.size()));
  if (added) strings_.append(text.c_str(), text.size() + 1);
  return it->second;
}

uint64_t KnownFrames::Learn(BinarySymbolizer& symbolizer, uint64_t begin, uint64_t end,
                            std::string_view display_name) {
  // Only the part before the first learnt range at or after `begin`, and
  // after one that holds it: ranges stay disjoint.
  auto next = std::upper_bound(ranges_.begin(), ranges_.end(), begin,
                               [](uint64_t o, const Range& r) { return o < r.begin; });
  if (next != ranges_.begin()) begin = std::max(begin, std::prev(next)->end);
  if (next != ranges_.end()) end = std::min(end, next->begin);
  if (begin >= end) return 0;
  std::vector<Run> learnt;
  std::vector<AddressFrame> previous;
  for (uint64_t offset = begin; offset < end; ++offset) {
    std::vector<AddressFrame> frames = FramesAtFileOffset(symbolizer, offset, display_name);
    if (offset == begin || !Continues(previous, frames)) {
      learnt.push_back(Run{offset, static_cast<uint32_t>(frames_.size()),
                           static_cast<uint32_t>(frames.size())});
      for (const AddressFrame& frame : frames) {
        frames_.push_back(Frame{Intern(frame.name), Intern(frame.file), frame.line,
                                frame.inlined ? 1u : 0u, frame.symbol_offset});
      }
    }
    previous = std::move(frames);
  }
  ranges_.insert(next, Range{begin, end});
  auto at = std::lower_bound(runs_.begin(), runs_.end(), begin,
                             [](const Run& r, uint64_t o) { return r.offset < o; });
  runs_.insert(at, learnt.begin(), learnt.end());
  return end - begin;
}

bool KnownFrames::Valid() const {
  for (size_t i = 0; i < ranges_.size(); ++i) {
    if (ranges_[i].begin >= ranges_[i].end) return false;
    if (i > 0 && ranges_[i].begin < ranges_[i - 1].end) return false;
  }
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (i > 0 && runs_[i].offset <= runs_[i - 1].offset) return false;
    if (runs_[i].first_frame > frames_.size() ||
        runs_[i].frame_count > frames_.size() - runs_[i].first_frame) {
      return false;
    }
  }
  for (const Range& range : ranges_) {
    auto run = std::lower_bound(runs_.begin(), runs_.end(), range.begin,
                                [](const Run& r, uint64_t o) { return r.offset < o; });
    if (run == runs_.end() || run->offset != range.begin) return false;
  }
  if (strings_.empty() || strings_.front() != '\0' || strings_.back() != '\0') return false;
  for (const Frame& frame : frames_) {
    if (frame.name >= strings_.size() || frame.file >= strings_.size() || frame.inlined > 1) {
      return false;
    }
  }
  return true;
}

}  // namespace sample
