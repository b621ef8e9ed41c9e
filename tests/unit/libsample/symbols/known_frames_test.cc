// KnownFrames against the symbolizer it learns from: every byte of the
// learnt ranges of bundled workloads (inline frames; FDE-named functions
// of a stripped copy) answers as FramesAtFileOffset does, runs are far
// fewer than bytes, learning only fills what is not learnt yet, and tables
// that do not hold together are refused by Valid().
#include "libsample/symbols/known_frames.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample {
namespace {

const char* const kInline = WORKLOAD_INLINE_PATH;
const char* const kInlineStripped = WORKLOAD_INLINE_STRIPPED_PATH;

// The executable segment's file offsets.
KnownFrames::Range TextOf(const std::string& binary) {
  auto elf = ElfSymbols::Load(binary);
  EXPECT_TRUE(elf);
  if (!elf) return {};
  for (const auto& segment : elf->segments()) {
    if (segment.executable) return {segment.offset, segment.offset + segment.filesz};
  }
  ADD_FAILURE() << binary << ": no executable segment";
  return {};
}

void ExpectEveryByteAsTheSymbolizer(const std::string& binary, const std::string& name,
                                    uint64_t max_bytes = UINT64_MAX) {
  auto symbolizer = BinarySymbolizer::Open(binary);
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  KnownFrames::Range text = TextOf(binary);
  ASSERT_LT(text.begin, text.end);
  if (text.end - text.begin > max_bytes) text.end = text.begin + max_bytes;
  KnownFrames known;
  EXPECT_EQ(known.Learn(*symbolizer, text.begin, text.end, name), text.end - text.begin);
  EXPECT_TRUE(known.Valid());
  EXPECT_LT(known.runs().size() * 3, text.end - text.begin) << "runs are not merged";
  size_t wrong = 0;
  for (uint64_t offset = text.begin; offset < text.end; ++offset) {
    const auto frames = known.At(offset);
    if (!frames || *frames != FramesAtFileOffset(*symbolizer, offset, name)) {
      if (wrong++ < 5) ADD_FAILURE() << fmt::format("{}: offset {:#x} differs", binary, offset);
    }
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_FALSE(known.At(text.end));
  if (text.begin > 0) EXPECT_FALSE(known.At(text.begin - 1));
}

TEST(KnownFramesTest, EveryByteOfAWorkloadWithInlineFrames) {
  ExpectEveryByteAsTheSymbolizer(kInline, "inline");
}

TEST(KnownFramesTest, EveryByteOfAStrippedCopyNamedByItsFdes) {
  ExpectEveryByteAsTheSymbolizer(kInlineStripped, "renamed");
}

// A real library: symbols, PLT stubs, FDE-only code (its lookups skipped
// where nothing the frames are made of changes, BinarySymbolizer::LookupKey).
TEST(KnownFramesTest, EveryByteOfThisProcesssLibc) {
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&qsort), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  ExpectEveryByteAsTheSymbolizer(info.dli_fname, "libc.so.6", 256 << 10);
}

TEST(KnownFramesTest, LearningFillsOnlyWhatIsMissing) {
  auto symbolizer = BinarySymbolizer::Open(kInline);
  ASSERT_TRUE(symbolizer);
  const KnownFrames::Range text = TextOf(kInline);
  const uint64_t third = (text.end - text.begin) / 3;
  KnownFrames known;
  EXPECT_EQ(known.Learn(*symbolizer, text.begin + third, text.begin + 2 * third, "inline"), third);
  // The first sixth, then around both: the gaps on either side only.
  EXPECT_EQ(known.Learn(*symbolizer, text.begin, text.begin + third / 2, "inline"), third / 2);
  EXPECT_EQ(known.Learn(*symbolizer, text.begin, text.end, "inline"),
            text.end - text.begin - third - third / 2);
  EXPECT_EQ(known.Learn(*symbolizer, text.begin, text.end, "inline"), 0u);
  EXPECT_TRUE(known.Valid());
  ASSERT_EQ(known.ranges().size(), 4u);
  for (uint64_t offset = text.begin; offset < text.end; offset += 7) {
    ASSERT_EQ(*known.At(offset), FramesAtFileOffset(*symbolizer, offset, "inline"))
        << fmt::format("{:#x}", offset);
  }
}

// Pieces cut anywhere between runs join into tables with the same
// frames at every offset, ranges cut in two made one again.
TEST(KnownFramesTest, PiecesJoinToTheSameFrames) {
  auto symbolizer = BinarySymbolizer::Open(kInline);
  ASSERT_TRUE(symbolizer);
  const KnownFrames::Range text = TextOf(kInline);
  const uint64_t third = (text.end - text.begin) / 3;
  KnownFrames known;
  known.Learn(*symbolizer, text.begin, text.begin + third, "inline");
  known.Learn(*symbolizer, text.begin + 2 * third, text.end, "inline");
  ASSERT_EQ(known.ranges().size(), 2u);
  for (const size_t max_bytes : {size_t{1}, size_t{200}, size_t{4096}, SIZE_MAX}) {
    const std::vector<KnownFrames> pieces = known.Pieces(max_bytes);
    ASSERT_FALSE(pieces.empty());
    std::vector<KnownFrames::Tables> tables;
    size_t runs = 0;
    for (const KnownFrames& piece : pieces) {
      EXPECT_TRUE(piece.Valid());
      runs += piece.runs().size();
      tables.push_back(piece.tables());
    }
    EXPECT_EQ(runs, known.runs().size());
    if (max_bytes == 1) EXPECT_EQ(pieces.size(), known.runs().size());
    if (max_bytes == SIZE_MAX) EXPECT_EQ(pieces.size(), 1u);
    const KnownFrames joined = KnownFrames::Join(tables);
    EXPECT_TRUE(joined.Valid());
    ASSERT_TRUE(std::ranges::equal(joined.ranges(), known.ranges())) << max_bytes;
    for (uint64_t offset = text.begin; offset < text.end; ++offset) {
      ASSERT_EQ(joined.At(offset), known.At(offset)) << max_bytes << " " << offset;
    }
  }
  EXPECT_TRUE(KnownFrames().Pieces(100).empty());
  EXPECT_TRUE(KnownFrames::Join({}).Valid());
}

TEST(KnownFramesTest, TablesThatDoNotHoldTogetherAreNotValid) {
  using Range = KnownFrames::Range;
  using Run = KnownFrames::Run;
  using Frame = KnownFrames::Frame;
  const std::string strings = std::string("\0main\0a.c\0", 10);
  const std::vector<Frame> frames = {Frame{1, 6, 3, 0, 0}};
  EXPECT_TRUE(KnownFrames({Range{16, 32}}, {Run{16, 0, 1}}, frames, strings).Valid());
  // A range without a run at its start.
  EXPECT_FALSE(KnownFrames({Range{16, 32}}, {Run{17, 0, 1}}, frames, strings).Valid());
  // Empty and overlapping ranges.
  EXPECT_FALSE(KnownFrames({Range{16, 16}}, {Run{16, 0, 1}}, frames, strings).Valid());
  EXPECT_FALSE(KnownFrames({Range{16, 32}, Range{20, 40}}, {Run{16, 0, 1}, Run{20, 0, 1}},
                           frames, strings)
                   .Valid());
  // Runs out of order, or past the frames.
  EXPECT_FALSE(KnownFrames({Range{16, 32}}, {Run{16, 0, 1}, Run{16, 0, 1}}, frames, strings)
                   .Valid());
  EXPECT_FALSE(KnownFrames({Range{16, 32}}, {Run{16, 0, 2}}, frames, strings).Valid());
  EXPECT_FALSE(KnownFrames({Range{16, 32}}, {Run{16, 1, 0xffffffff}}, frames, strings).Valid());
  // Too many frames for one run, a string too long.
  const std::vector<Frame> many(KnownFrames::kMaxFrames + 1, frames[0]);
  EXPECT_FALSE(
      KnownFrames({Range{16, 32}}, {Run{16, 0, KnownFrames::kMaxFrames + 1}}, many, strings)
          .Valid());
  EXPECT_TRUE(
      KnownFrames({Range{16, 32}}, {Run{16, 0, KnownFrames::kMaxFrames}}, many, strings).Valid());
  std::string long_name = std::string(1, '\0') + std::string(KnownFrames::kMaxString + 1, 'x');
  long_name.push_back('\0');
  EXPECT_FALSE(
      KnownFrames({Range{16, 32}}, {Run{16, 0, 1}}, {Frame{1, 0, 3, 0, 0}}, long_name).Valid());
  // A long string no frame names: refused all the same.
  EXPECT_FALSE(
      KnownFrames({Range{16, 32}}, {Run{16, 0, 1}}, frames, strings + long_name.substr(1)).Valid());
  // A string past the blob, a blob not ending in NUL.
  EXPECT_FALSE(
      KnownFrames({Range{16, 32}}, {Run{16, 0, 1}}, {Frame{10, 6, 3, 0, 0}}, strings).Valid());
  EXPECT_FALSE(
      KnownFrames({Range{16, 32}}, {Run{16, 0, 1}}, frames, std::string("\0main", 5)).Valid());
  // What a valid table answers: its symbol offsets move on with the byte.
  const KnownFrames known({Range{16, 32}}, {Run{16, 0, 1}}, frames, strings);
  const auto at = known.At(20);
  ASSERT_TRUE(at);
  ASSERT_EQ(at->size(), 1u);
  EXPECT_EQ((*at)[0], (AddressFrame{"main", "a.c", 3, false, 4}));
  EXPECT_FALSE(known.At(32));
  EXPECT_FALSE(known.At(15));
}

}  // namespace
}  // namespace sample
