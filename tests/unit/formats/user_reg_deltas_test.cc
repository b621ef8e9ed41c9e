// The codec of kChunkFlagUserRegDeltas, which writers before the sample
// columns set: readers still undo it in older files.
#include "formats/user_reg_deltas.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "libsample/crc32.h"
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

// A file of a writer before the sample columns: its records chunk holds
// time deltas and register deltas (made here by rewriting a stored chunk
// in place, as those writers did before compressing). The reader still
// gives back the kernel's records.
TEST(UserRegDeltasTest, OlderFilesWithTheseDeltasStillRead) {
  std::string dir = ::testing::TempDir() + "user_reg_deltas.XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/old.data";
  const std::vector<EventDesc> events = Events();
  const Chunk c = MakeChunk(EventTable(events));
  const uint32_t time_offset = SampleTimeOffset(events[0].attr);
  {
    auto writer = SampleFileWriter::Create(path, WriterOptions{.zstd_level = 0});
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    (*writer)->Submit(ChunkType::kEvents, EncodeEvents(events));
    RecordsChunk chunk;
    chunk.records = c.records;
    chunk.record_count = 6;
    chunk.time_min = 1000;
    chunk.time_max = 1003;
    chunk.sample_time_offset = time_offset;
    (*writer)->SubmitRecords(std::move(chunk));
    ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
  }
  uint64_t chunk_offset = 0;
  {
    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    ASSERT_EQ(reader->record_chunks().size(), 1u);
    chunk_offset = reader->record_chunks()[0].offset;
  }
  // The chunk rewritten as the older writers stored it.
  std::ifstream in(path, std::ios::binary);
  std::vector<char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  ChunkHeader header;
  std::memcpy(&header, file.data() + chunk_offset, sizeof(header));
  ASSERT_EQ(header.raw_size, c.records.size());
  Bytes payload = c.records;
  EncodeSampleTimeDeltas(payload, time_offset);
  EncodeUserRegDeltas(payload, EventTable(events));
  ASSERT_NE(payload, c.records);
  header.flags =
      kChunkFlagSampleTimeDeltas | time_offset << kChunkTimeOffsetShift | kChunkFlagUserRegDeltas;
  header.crc32 = 0;
  header.crc32 = Crc32(payload, Crc32(std::as_bytes(std::span(&header, 1))));
  std::memcpy(file.data() + chunk_offset, &header, sizeof(header));
  std::memcpy(file.data() + chunk_offset + sizeof(header), payload.data(), payload.size());
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(file.data(), file.size());

  auto reader = SampleFileReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  ASSERT_EQ(reader->record_chunks().size(), 1u);
  EXPECT_EQ(reader->record_chunks()[0].header.flags, header.flags);
  auto read = reader->ReadPayload(reader->record_chunks()[0]);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_TRUE(std::ranges::equal(read->bytes(), c.records));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sample::format
