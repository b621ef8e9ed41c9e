#include "libsample/symbols/known_frames.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

#include "libsample/symbols/binary_symbolizer.h"

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

bool KnownFrames::operator==(const KnownFrames& other) const {
  return std::ranges::equal(ranges(), other.ranges()) && std::ranges::equal(runs(), other.runs()) &&
         std::ranges::equal(frames(), other.frames()) && strings() == other.strings();
}

bool KnownFrames::Covers(uint64_t offset) const {
  const std::span<const Range> ranges = this->ranges();
  auto next = std::upper_bound(ranges.begin(), ranges.end(), offset,
                               [](uint64_t o, const Range& r) { return o < r.begin; });
  return next != ranges.begin() && offset < std::prev(next)->end;
}

std::optional<std::vector<AddressFrame>> KnownFrames::At(uint64_t offset) const {
  if (!Covers(offset)) return std::nullopt;
  // A range begins with a run, so the run found is inside the range.
  const std::span<const Run> runs = this->runs();
  const std::span<const Frame> frames = this->frames();
  const std::string_view strings = this->strings();
  auto next = std::upper_bound(runs.begin(), runs.end(), offset,
                               [](uint64_t o, const Run& r) { return o < r.offset; });
  const Run& run = *std::prev(next);
  const uint64_t delta = offset - run.offset;
  std::vector<AddressFrame> out;
  out.reserve(run.frame_count);
  for (uint32_t i = 0; i < run.frame_count; ++i) {
    const Frame& f = frames[run.first_frame + i];
    out.push_back(AddressFrame{
        strings.data() + f.name, strings.data() + f.file, f.line, f.inlined != 0,
        f.symbol_offset == kNoOffset ? UINT64_MAX : uint64_t{f.symbol_offset} + delta});
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
  if (rest_) {
    auto rest = std::exchange(rest_, nullptr);
    if (std::optional<KnownFrames> all = rest()) {
      const uint64_t learnt = learnt_;
      *this = std::move(*all);
      learnt_ = learnt;
    }
  }
  // The gaps between the learnt ranges that [begin, end) overlaps, first.
  std::vector<Range> gaps;
  const std::span<const Range> ranges = this->ranges();
  auto next = std::upper_bound(ranges.begin(), ranges.end(), begin,
                               [](uint64_t o, const Range& r) { return o < r.begin; });
  if (next != ranges.begin()) begin = std::max(begin, std::prev(next)->end);
  for (; begin < end; ++next) {
    const uint64_t stop = next != ranges.end() ? std::min(end, next->begin) : end;
    if (begin < stop) gaps.push_back(Range{begin, stop});
    if (next == ranges.end()) break;
    begin = std::max(begin, next->end);
  }
  uint64_t learnt = 0;
  for (const Range& gap : gaps) learnt += LearnGap(symbolizer, gap, display_name);
  learnt_ += learnt;
  return learnt;
}

uint64_t KnownFrames::LearnGap(BinarySymbolizer& symbolizer, Range gap,
                               std::string_view display_name) {
  std::vector<Run> learnt;
  std::vector<AddressFrame> previous;
  BinarySymbolizer::LookupKey previous_key;
  for (uint64_t offset = gap.begin; offset < gap.end; ++offset) {
    // Where nothing the frames are made of changed, they are the last
    // byte's one further on: no lookup (learning 2-5x faster than a lookup
    // a byte, measured on libc and goleaf).
    BinarySymbolizer::LookupKey key = symbolizer.KeyAtFileOffset(offset);
    if (offset != gap.begin && key == previous_key) {
      for (AddressFrame& frame : previous) {
        if (frame.symbol_offset != UINT64_MAX) ++frame.symbol_offset;
      }
      continue;
    }
    previous_key = key;
    std::vector<AddressFrame> frames = FramesAtFileOffset(symbolizer, offset, display_name);
    if (offset == gap.begin || !Continues(previous, frames)) {
      const auto fits = [](const AddressFrame& f) {
        return f.line <= kMaxLine && (f.symbol_offset == UINT64_MAX || f.symbol_offset < kNoOffset);
      };
      if (!std::all_of(frames.begin(), frames.end(), fits)) {
        gap.end = offset;
        break;
      }
      learnt.push_back(Run{offset, static_cast<uint32_t>(frames_.size()),
                           static_cast<uint32_t>(frames.size())});
      for (const AddressFrame& frame : frames) {
        frames_.push_back(
            Frame{Intern(frame.name), Intern(frame.file), frame.line, frame.inlined ? 1u : 0u,
                  frame.symbol_offset == UINT64_MAX ? kNoOffset
                                                    : static_cast<uint32_t>(frame.symbol_offset)});
      }
    }
    previous = std::move(frames);
  }
  if (gap.begin == gap.end) return 0;
  auto range_at = std::lower_bound(ranges_.begin(), ranges_.end(), gap.begin,
                                   [](const Range& r, uint64_t o) { return r.begin < o; });
  ranges_.insert(range_at, gap);
  auto run_at = std::lower_bound(runs_.begin(), runs_.end(), gap.begin,
                                 [](const Run& r, uint64_t o) { return r.offset < o; });
  runs_.insert(run_at, learnt.begin(), learnt.end());
  return gap.end - gap.begin;
}

bool KnownFrames::Valid() const {
  const std::span<const Range> ranges = this->ranges();
  const std::span<const Run> runs = this->runs();
  const std::span<const Frame> frames = this->frames();
  const std::string_view strings = this->strings();
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].begin >= ranges[i].end) return false;
    if (i > 0 && ranges[i].begin < ranges[i - 1].end) return false;
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i > 0 && runs[i].offset <= runs[i - 1].offset) return false;
    if (runs[i].first_frame > frames.size() || runs[i].frame_count > kMaxFrames ||
        runs[i].frame_count > frames.size() - runs[i].first_frame) {
      return false;
    }
  }
  for (const Range& range : ranges) {
    auto run = std::lower_bound(runs.begin(), runs.end(), range.begin,
                                [](const Run& r, uint64_t o) { return r.offset < o; });
    if (run == runs.end() || run->offset != range.begin) return false;
  }
  if (strings.empty() || strings.front() != '\0' || strings.back() != '\0') return false;
  // Every string short (a string starting anywhere ends at the next NUL),
  // so that each frame's need only be in the blob.
  for (size_t at = 0; at < strings.size();) {
    const size_t end = strings.find('\0', at);
    if (end - at > kMaxString) return false;
    at = end + 1;
  }
  return std::all_of(frames.begin(), frames.end(), [strings](const Frame& frame) {
    return frame.name < strings.size() && frame.file < strings.size();
  });
}

std::vector<KnownFrames> KnownFrames::Pieces(size_t max_bytes) const {
  const std::span<const Range> ranges = this->ranges();
  const std::span<const Run> runs = this->runs();
  const std::span<const Frame> frames = this->frames();
  const std::string_view strings = this->strings();
  std::vector<KnownFrames> pieces;
  auto range = ranges.begin();
  for (size_t first = 0; first < runs.size();) {
    // The runs of this piece: [first, last).
    size_t last = first;
    size_t bytes = 0;
    do {
      bytes += sizeof(Run) + runs[last].frame_count * (sizeof(Frame) + 32);
      ++last;
    } while (last < runs.size() && bytes + sizeof(Run) <= max_bytes);
    const uint64_t lo = runs[first].offset;
    const uint64_t hi = last < runs.size() ? runs[last].offset : UINT64_MAX;
    KnownFrames piece;
    for (; range != ranges.end() && range->begin < hi; ++range) {
      if (range->end > lo) {
        piece.ranges_.push_back(Range{std::max(range->begin, lo), std::min(range->end, hi)});
      }
      if (range->end > hi) break;  // goes on into the next piece
    }
    for (size_t r = first; r < last; ++r) {
      const Run& run = runs[r];
      piece.runs_.push_back(
          Run{run.offset, static_cast<uint32_t>(piece.frames_.size()), run.frame_count});
      for (uint32_t i = 0; i < run.frame_count; ++i) {
        Frame frame = frames[run.first_frame + i];
        frame.name = piece.Intern(std::string(strings.data() + frame.name));
        frame.file = piece.Intern(std::string(strings.data() + frame.file));
        piece.frames_.push_back(frame);
      }
    }
    piece.interned_.clear();
    pieces.push_back(std::move(piece));
    first = last;
  }
  return pieces;
}

KnownFrames KnownFrames::Join(std::span<const Tables> pieces) {
  KnownFrames joined;
  joined.strings_.clear();
  for (const Tables& piece : pieces) {
    const auto runs_at = static_cast<uint32_t>(joined.frames_.size());
    const auto strings_at = static_cast<uint32_t>(joined.strings_.size());
    for (const Range& range : piece.ranges) {
      if (!joined.ranges_.empty() && joined.ranges_.back().end == range.begin) {
        joined.ranges_.back().end = range.end;  // cut by Pieces: one again
      } else {
        joined.ranges_.push_back(range);
      }
    }
    for (Run run : piece.runs) {
      run.first_frame += runs_at;
      joined.runs_.push_back(run);
    }
    for (Frame frame : piece.frames) {
      frame.name += strings_at;
      frame.file += strings_at;
      joined.frames_.push_back(frame);
    }
    joined.strings_.append(piece.strings);
  }
  if (joined.strings_.empty()) joined.strings_.push_back('\0');
  return joined;
}

}  // namespace sample
