// KnownFrames: the frames FramesAtFileOffset gives for every byte of some
// functions of one binary, computed once so that later embeddings of the
// same build read no DWARF (the recorder keeps them between recordings:
// record/embed/frame_cache.h).
//
// Each byte of a learnt range is looked up (exact by construction, whatever
// the line tables and inline scopes hold), and consecutive bytes whose
// frames differ only by their symbol offsets, each one more than the
// byte before's, are kept as one run: a function's runs are its line rows
// and inline boundaries, not its bytes. At() gives the frames of a byte
// from its run, its symbol offsets moved on by the byte's distance from
// the run's start.
//
// Flat tables of fixed-size entries and one string blob, which a cache file
// holds as they are in memory, cut into pieces (Pieces, Join) so that a
// recording reads the few it looks up, and checks them in one pass
// (Valid()): it looks up a hundred offsets, not the thousands of runs a
// binary's learnt functions hold.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libsample/symbols/address_frames.h"

namespace sample {

class BinarySymbolizer;

class KnownFrames {
 public:
  // Learnt file offsets [begin, end).
  struct Range {
    uint64_t begin = 0;
    uint64_t end = 0;
    bool operator==(const Range&) const = default;
  };
  // From `offset` to the next run or the end of its range: frames
  // [first_frame, first_frame + frame_count) of frames(), innermost first.
  struct Run {
    uint64_t offset = 0;
    uint32_t first_frame = 0;
    uint32_t frame_count = 0;
    bool operator==(const Run&) const = default;
  };
  // An AddressFrame with its strings as offsets into strings(), in 16
  // bytes (the tables are most of a cache file, read at every recording's
  // close): a line of 2^31 or more, or a symbol offset of 2^32 - 1 or more,
  // is not learnt (Learn stops its range there).
  struct Frame {
    uint32_t name = 0;
    uint32_t file = 0;
    uint32_t line : 31 = 0;
    uint32_t inlined : 1 = 0;
    uint32_t symbol_offset = kNoOffset;  // AddressFrame's UINT64_MAX
    bool operator==(const Frame&) const = default;
  };
  static constexpr uint32_t kNoOffset = UINT32_MAX;
  static constexpr uint32_t kMaxLine = (uint32_t{1} << 31) - 1;

  // Tables read from elsewhere (a cache file's pieces: Join).
  struct Tables {
    std::span<const Range> ranges;
    std::span<const Run> runs;
    std::span<const Frame> frames;
    std::string_view strings;
  };

  KnownFrames() = default;
  // Tables as written by an earlier KnownFrames; check them with Valid()
  // before any lookup.
  KnownFrames(std::vector<Range> ranges, std::vector<Run> runs, std::vector<Frame> frames,
              std::string strings);

  // Whether `offset` lies in a learnt range.
  bool Covers(uint64_t offset) const;
  // The frames of `offset`, or nullopt when no learnt range holds it.
  std::optional<std::vector<AddressFrame>> At(uint64_t offset) const;
  // Looks up every byte of [begin, end) not learnt yet (each gap between
  // the learnt ranges it overlaps) with FramesAtFileOffset and keeps the
  // runs, up to a byte whose frames a Frame cannot hold. Returns the bytes
  // learnt.
  uint64_t Learn(BinarySymbolizer& symbolizer, uint64_t begin, uint64_t end,
                 std::string_view display_name);
  // Whether the tables hold together: ranges sorted, disjoint and not
  // empty; runs sorted and unique, one at each range's begin, their frames
  // in the table and at most kMaxFrames; strings in the blob, at most
  // kMaxString bytes (so that one At() copies at most ~32 MB, whatever a
  // file says). One pass over each table: O(size), whatever the strings'
  // sharing. Learn() does not refuse them: a binary with such a name
  // has its cache file refused and learnt again, never misread.
  bool Valid() const;
  static constexpr uint32_t kMaxFrames = 256;
  static constexpr size_t kMaxString = size_t{64} << 10;

  // The tables cut between runs into pieces of about `max_bytes` each (at
  // least one run), each a KnownFrames of its own: its ranges cut at its
  // bounds, its frames and strings only its runs'. A cache file keeps them
  // apart, so that a recording reads the pieces holding its offsets, not
  // the whole file (record/embed/frame_cache.h).
  std::vector<KnownFrames> Pieces(size_t max_bytes) const;
  // Pieces in order, made one: the same frames at every offset as the
  // tables Pieces cut (a range cut in two is one again), not the same
  // tables (frames in run order, strings repeated). Check with Valid().
  static KnownFrames Join(std::span<const Tables> pieces);
  Tables tables() const { return Tables{ranges(), runs(), frames(), strings()}; }

  // For tables holding only some pieces of a file: `rest` gives all of
  // them, which the first Learn() reads (and takes, if it can) before it
  // learns anything, so that what the file knew is not learnt again.
  void LearnAfter(std::function<std::optional<KnownFrames>()> rest) { rest_ = std::move(rest); }
  // Bytes Learn() added since construction: tables to save.
  uint64_t learnt() const { return learnt_; }

  std::span<const Range> ranges() const { return ranges_; }
  std::span<const Run> runs() const { return runs_; }
  std::span<const Frame> frames() const { return frames_; }
  // NUL-terminated strings; offset 0 is the empty string.
  std::string_view strings() const { return strings_; }

  bool operator==(const KnownFrames& other) const;

 private:
  uint64_t LearnGap(BinarySymbolizer& symbolizer, Range gap, std::string_view display_name);
  uint32_t Intern(const std::string& text);

  std::vector<Range> ranges_;
  std::vector<Run> runs_;
  std::vector<Frame> frames_;
  std::string strings_ = std::string(1, '\0');
  std::unordered_map<std::string, uint32_t> interned_;  // filled on first Intern
  std::function<std::optional<KnownFrames>()> rest_;
  uint64_t learnt_ = 0;
};

}  // namespace sample
