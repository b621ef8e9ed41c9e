#include "formats/user_reg_deltas.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/user_regs.h"
#include "tests/unit/synthetic_records.h"

namespace sample::format {
namespace {

namespace st = sample::testing;
using st::Bytes;

constexpr uint64_t kRegsType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                               PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
                               PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
constexpr uint64_t kPlainType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
constexpr uint64_t kRegsId = 10, kPlainId = 20;

// Event 0 records AX, BP, SP, IP (perf numbers 0, 6, 7, 8): BP is the second
// value, SP the third, IP the fourth. Event 1 records no registers.
std::vector<EventDesc> Events() {
  EventDesc regs{st::MakeAttr(kRegsType, true), "cpu-clock", {kRegsId}};
  regs.attr.sample_regs_user = 1u << 0 | 1u << 6 | 1u << 7 | 1u << 8;
  regs.attr.sample_stack_user = 64;
  EventDesc plain{st::MakeAttr(kPlainType, true), "task-clock", {kPlainId}};
  return {regs, plain};
}

struct Regs {
  uint64_t ax, bp, sp, ip;
};

Bytes RegsSample(const perf_event_attr& attr, uint32_t tid, uint64_t ip,
                 std::vector<uint64_t> chain, const Regs& r,
                 uint64_t abi = PERF_SAMPLE_REGS_ABI_64) {
  st::SampleFields f;
  f.id = kRegsId;
  f.ip = ip;
  f.pid = tid;
  f.tid = tid;
  f.time = 1000 + tid;
  f.period = 1;
  f.callchain = std::move(chain);
  f.extra = st::RegsUserBlock(abi, abi == PERF_SAMPLE_REGS_ABI_NONE
                                       ? std::vector<uint64_t>{}
                                       : std::vector<uint64_t>{r.ax, r.bp, r.sp, r.ip});
  const std::vector<std::byte> stack(16, std::byte{0x5a});
  const Bytes block = st::StackUserBlock(stack, 16);
  f.extra.insert(f.extra.end(), block.begin(), block.end());
  return st::MakeSample(attr, f);
}

// The four register values of the sample at byte `at` of `records`.
Regs RegsAt(const Bytes& records, size_t at, const EventTable& table) {
  const std::span<const std::byte> rest = std::span(records).subspan(at);
  perf_event_header h;
  std::memcpy(&h, rest.data(), sizeof(h));
  const auto sample = ParseSample(rest.first(h.size), table.events()[0].attr);
  EXPECT_TRUE(sample && sample->user_regs.size() == 4);
  if (!sample || sample->user_regs.size() != 4) return {};
  return {sample->user_regs[0], sample->user_regs[1], sample->user_regs[2], sample->user_regs[3]};
}

struct Chunk {
  Bytes records;
  std::vector<size_t> at;  // offsets of the register samples, in order
};

Chunk MakeChunk(const EventTable& table) {
  const perf_event_attr& attr = table.events()[0].attr;
  Chunk c;
  auto add = [&](Bytes record, bool regs) {
    if (regs) c.at.push_back(c.records.size());
    c.records.insert(c.records.end(), record.begin(), record.end());
  };
  const uint64_t user = PERF_CONTEXT_USER, kernel = PERF_CONTEXT_KERNEL;
  // Thread 1 in user mode at one depth, then deeper; thread 2 between them;
  // a sample taken in the kernel (user pc from the chain), one of a kernel
  // thread (no registers), and another event's sample.
  add(RegsSample(attr, 1, 0x401000, {user, 0x401000, 0x402000},
                 {7, 0x7ffd1000, 0x7ffd0fc0, 0x401000}),
      true);
  add(RegsSample(attr, 2, 0x501000, {user, 0x501000}, {8, 0x7ffe2040, 0x7ffe2000, 0x501000}), true);
  add(RegsSample(attr, 1, 0x401010, {user, 0x401010, 0x402000},
                 {9, 0x7ffd1000, 0x7ffd0fc0, 0x401010}),
      true);
  add(RegsSample(attr, 1, 0xffffffff81000000, {kernel, 0xffffffff81000000, user, 0x401020},
                 {9, 0x7ffd0f80, 0x7ffd0f40, 0x401020}),
      true);
  add(RegsSample(attr, 3, 0xffffffff81000010, {kernel, 0xffffffff81000010}, {},
                 PERF_SAMPLE_REGS_ABI_NONE),
      false);
  st::SampleFields other;
  other.id = kPlainId;
  other.ip = 0x401000;
  other.tid = 1;
  Bytes plain = st::MakeSample(table.events()[1].attr, other);
  add(plain, false);
  return c;
}

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

// Through the writer and the reader: the file holds the deltas (the flag is
// set on compressed chunks, not on stored ones) and reading gives back the
// kernel's records byte for byte.
TEST(UserRegDeltasTest, WrittenFilesReadBackAsTheKernelWroteThem) {
  std::string dir = ::testing::TempDir() + "user_reg_deltas.XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::vector<EventDesc> events = Events();
  const Chunk c = MakeChunk(EventTable(events));
  for (int level : {1, 0}) {
    const std::string path = dir + "/level" + std::to_string(level) + ".data";
    {
      auto writer = SampleFileWriter::Create(path, WriterOptions{.zstd_level = level});
      ASSERT_TRUE(writer.has_value()) << writer.error().message;
      (*writer)->Submit(ChunkType::kEvents, EncodeEvents(events));
      RecordsChunk chunk;
      chunk.records = c.records;
      chunk.record_count = 6;
      chunk.time_min = 1000;
      chunk.time_max = 1003;
      chunk.sample_time_offset = SampleTimeOffset(events[0].attr);
      (*writer)->SubmitRecords(std::move(chunk));
      ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
    }
    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    ASSERT_EQ(reader->record_chunks().size(), 1u);
    const ChunkHeader& h = reader->record_chunks()[0].header;
    EXPECT_EQ((h.flags & kChunkFlagUserRegDeltas) != 0, level != 0) << level;
    auto payload = reader->ReadPayload(reader->record_chunks()[0]);
    ASSERT_TRUE(payload.has_value()) << payload.error().message;
    EXPECT_TRUE(std::ranges::equal(payload->bytes(), c.records)) << level;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sample::format
