// The codec of kChunkFlagUserRegDeltas, which writers before the sample
// columns set: readers still undo it in older files.
#include "formats/user_reg_deltas.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/formats/reg_samples.h"

namespace sample::format {
namespace {

using namespace reg_samples;

TEST(UserRegDeltasTest, RegistersBecomeSmallRepeatingNumbersAndComeBack) {
  const EventTable table(Events());
  EXPECT_TRUE(HasUserRegDeltas(table));
  Chunk c = MakeChunk(table);
  const Bytes original = c.records;

  EncodeUserRegDeltas(c.records, table);
  // ip - user pc; bp - sp; sp - the thread's previous sp. AX is untouched.
  const std::vector<Regs> want = {
      {7, 0x40, 0x7ffd0fc0, 0},
      {8, 0x40, 0x7ffe2000, 0},
      {9, 0x40, 0, 0},
      {9, 0x40, uint64_t(0x7ffd0f40) - 0x7ffd0fc0, 0},
  };
  for (size_t i = 0; i < want.size(); ++i) {
    const Regs got = RegsAt(c.records, c.at[i], table);
    EXPECT_EQ(got.ax, want[i].ax) << i;
    EXPECT_EQ(got.bp, want[i].bp) << i;
    EXPECT_EQ(got.sp, want[i].sp) << i;
    EXPECT_EQ(got.ip, want[i].ip) << i;
  }
  // Nothing but those registers changed.
  size_t differing = 0;
  for (size_t i = 0; i < original.size(); ++i) differing += c.records[i] != original[i];
  EXPECT_GT(differing, 0u);
  EXPECT_LE(differing, 3u * 8 * want.size());

  DecodeUserRegDeltas(c.records, table);
  EXPECT_EQ(c.records, original);
}

TEST(UserRegDeltasTest, EventsWithoutTheThreeRegistersAreLeftAlone) {
  std::vector<EventDesc> events = Events();
  events[0].attr.sample_regs_user &= ~(uint64_t{1} << 6);  // no BP
  events.pop_back();
  const EventTable table(events);
  EXPECT_FALSE(HasUserRegDeltas(table));
  Bytes records = st::MakeSample(events[0].attr, st::SampleFields{.id = kRegsId, .ip = 1});
  const Bytes original = records;
  EncodeUserRegDeltas(records, table);
  EXPECT_EQ(records, original);
}

TEST(UserRegDeltasTest, CutOrGarbledChunksNeverCrashAndKeepWhatParses) {
  const EventTable table(Events());
  const Chunk c = MakeChunk(table);
  Bytes encoded = c.records;
  EncodeUserRegDeltas(encoded, table);
  for (size_t cut = 0; cut <= encoded.size(); cut += 8) {
    Bytes part(encoded.begin(), encoded.begin() + cut);
    DecodeUserRegDeltas(part, table);
    // A record wholly before the cut decodes as the original's.
    if (cut >= c.at[1]) EXPECT_EQ(RegsAt(part, c.at[0], table).sp, 0x7ffd0fc0u) << cut;
  }
  // Every byte flipped in turn: decoding stays in bounds (ASan checks).
  for (size_t i = 0; i < encoded.size(); ++i) {
    Bytes garbled = encoded;
    garbled[i] ^= std::byte{0xff};
    DecodeUserRegDeltas(garbled, table);
  }
}

}  // namespace
}  // namespace sample::format
