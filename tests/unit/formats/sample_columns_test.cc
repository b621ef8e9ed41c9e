#include "formats/sample_columns.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/embedded_fields.h"
#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "libsample/crc32.h"
#include "libsample/perf/record_walker.h"
#include "tests/unit/formats/reg_samples.h"

namespace sample::format {
namespace {

using namespace reg_samples;

// The column sizes at the end of an encoded payload.
std::vector<uint32_t> ColumnSizes(const Bytes& payload) {
  std::vector<uint32_t> sizes(kSampleColumnCount);
  std::memcpy(sizes.data(), payload.data() + payload.size() - kSampleColumnFooterSize,
              kSampleColumnFooterSize);
  return sizes;
}

TEST(SampleColumnsTest, TimeIpAndRegistersMoveToColumnsAndComeBack) {
  const EventTable table(Events());
  const Chunk c = MakeChunk(table);
  Bytes payload = c.records;
  EncodeSampleColumns(payload, table);

  const std::vector<uint32_t> sizes = ColumnSizes(payload);
  // Six samples parse (five of the register event, one plain): each has a
  // time and an ip; four carry AX, BP, SP and IP (columns 2 + 0, 6, 7, 8).
  // Every value here fits one varint byte but the first time, the first
  // thread's first SP and its two first AX... all but a few are one byte.
  EXPECT_GE(sizes[0], 6u);
  EXPECT_GE(sizes[1], 6u);
  for (const size_t reg : {0u, 6u, 7u, 8u}) EXPECT_GE(sizes[2 + reg], 4u) << reg;
  uint64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    total += sizes[i];
    if (i > 1 && i != 2 && i != 8 && i != 9 && i != 10) EXPECT_EQ(sizes[i], 0u) << i;
  }
  const size_t records_size = payload.size() - kSampleColumnFooterSize - total;
  ASSERT_EQ(records_size, c.records.size());
  // The ip of a user sample is its chain's first address: a zero byte.
  EXPECT_EQ(payload[records_size + sizes[0]], std::byte{0});
  // In the records, the moved fields are zeros and nothing else changed.
  size_t differing = 0;
  for (size_t i = 0; i < records_size; ++i) {
    if (payload[i] != c.records[i]) {
      ++differing;
      EXPECT_EQ(payload[i], std::byte{0}) << i;
    }
  }
  EXPECT_GT(differing, 0u);

  auto decoded = DecodeSampleColumns(payload, table);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EXPECT_EQ(*decoded, c.records.size());
  payload.resize(*decoded);
  EXPECT_EQ(payload, c.records);
}

// cpu-clock's period is the time since its last sample: a sample that comes
// one period after the previous one costs a zero byte.
TEST(SampleColumnsTest, ClockSamplesOnePeriodApartStoreZeros) {
  std::vector<EventDesc> events = Events();
  events.pop_back();
  const perf_event_attr attr = events[0].attr;
  const EventTable table(events);
  Bytes records;
  for (uint64_t i = 0; i < 20; ++i) {
    st::SampleFields f{.id = kRegsId, .ip = 0x401000, .pid = 1, .tid = 1};
    f.time = 5'000'000 + i * 250'000;
    f.period = 250'000;
    f.callchain = {PERF_CONTEXT_USER, 0x401000};
    f.extra = st::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {1, 0x7ffd1040, 0x7ffd1000, 0x401000});
    const Bytes stack = st::StackUserBlock(std::vector<std::byte>(16, std::byte{1}), 16);
    f.extra.insert(f.extra.end(), stack.begin(), stack.end());
    const Bytes sample = st::MakeSample(attr, f);
    records.insert(records.end(), sample.begin(), sample.end());
  }
  Bytes payload = records;
  EncodeSampleColumns(payload, table);
  const std::vector<uint32_t> sizes = ColumnSizes(payload);
  // The first time (5 ms - 0.25 ms, zigzagged: 9.5e6) takes 4 bytes, the
  // other 19 a zero each.
  EXPECT_EQ(sizes[0], 4u + 19u);
  const size_t time_at = payload.size() - kSampleColumnFooterSize -
                         std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
  for (size_t i = 4; i < sizes[0]; ++i) EXPECT_EQ(payload[time_at + i], std::byte{0}) << i;
  auto decoded = DecodeSampleColumns(payload, table);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  payload.resize(*decoded);
  EXPECT_EQ(payload, records);
}

void CutOrGarbled(ColumnCoding coding);

// Split time (kChunkFlagSplitTimeColumn): the time column is a count, the
// low bytes and the high varints, and the parts say where each begins.
TEST(SampleColumnsTest, ASplitTimeColumnComesBackAndItsPartsAreWhereTheySay) {
  const EventTable table(Events());
  const Chunk c = MakeChunk(table);
  Bytes payload = c.records;
  const auto parts = EncodeSampleColumns(payload, table, {.split_time = true});
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->time_low, c.records.size());
  const std::vector<uint32_t> sizes = ColumnSizes(payload);
  EXPECT_EQ(parts->rest, parts->time_low + sizes[0]);
  // The count (one byte here), then a low byte per sample with a time.
  const auto count = static_cast<uint8_t>(payload[parts->time_low]);
  EXPECT_GT(count, 0u);
  EXPECT_EQ(parts->time_high, parts->time_low + 1 + count);
  auto decoded = DecodeSampleColumns(payload, table, {.split_time = true});
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  payload.resize(*decoded);
  EXPECT_EQ(payload, c.records);

  // A count past the column's bytes is refused by name.
  Bytes crafted = c.records;
  const auto again = EncodeSampleColumns(crafted, table, {.split_time = true});
  crafted[again->time_low] = std::byte{0x7f};
  const auto refused = DecodeSampleColumns(crafted, table, {.split_time = true});
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("low bytes"), std::string::npos)
      << refused.error().message;
}

// Recent stack pointers (kChunkFlagRecentStackPointers): a tid's SP is a
// place among its recent ones when it was one of them, a difference from
// the latest when not; threads keep lists of their own.
TEST(SampleColumnsTest, StackPointersSeenLatelyArePlacesInAList) {
  std::vector<EventDesc> events = Events();
  events.pop_back();
  const perf_event_attr attr = events[0].attr;
  const EventTable table(events);
  Bytes records;
  // Thread 1 goes through 3 depths (a, b, c, b, a, b, c, ...), thread 2
  // stays at one; 40 stack pointers of thread 1 in a row, then its third
  // depth again (it fell out of the list).
  std::vector<std::pair<uint32_t, uint64_t>> sps;
  for (int i = 0; i < 12; ++i) {
    sps.emplace_back(1, 0x7ffd1000 - 0x40 * std::abs(i % 4 - 2));
    sps.emplace_back(2, 0x7ffe2000);
  }
  for (uint64_t i = 0; i < kRecentStackPointers + 8; ++i) sps.emplace_back(1, 0x7ff00000 + 16 * i);
  sps.emplace_back(1, 0x7ffd1000);
  for (const auto& [tid, sp] : sps) {
    st::SampleFields f{.id = kRegsId, .ip = 0x401000, .pid = tid, .tid = tid};
    f.time = 5'000'000;
    f.period = 250'000;
    f.callchain = {PERF_CONTEXT_USER, 0x401000};
    f.extra = st::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {1, sp + 0x30, sp, 0x401000});
    const Bytes stack = st::StackUserBlock(std::vector<std::byte>(16, std::byte{1}), 16);
    f.extra.insert(f.extra.end(), stack.begin(), stack.end());
    const Bytes sample = st::MakeSample(attr, f);
    records.insert(records.end(), sample.begin(), sample.end());
  }
  const ColumnCoding coding{.split_time = true, .recent_sp = true};
  Bytes payload = records;
  ASSERT_TRUE(EncodeSampleColumns(payload, table, coding).has_value());
  const std::vector<uint32_t> sizes = ColumnSizes(payload);
  size_t sp_at = payload.size() - kSampleColumnFooterSize;
  for (size_t i = 2 + 7; i < kSampleColumnCount; ++i) sp_at -= sizes[i];
  const Bytes column(payload.begin() + static_cast<std::ptrdiff_t>(sp_at),
                     payload.begin() + static_cast<std::ptrdiff_t>(sp_at + sizes[2 + 7]));
  // Thread 1 goes a, b, c (each new: 0, then the difference from its
  // latest), then b is 2nd in its list, a 3rd, b 2nd, c 3rd, ...; thread
  // 2's first is new, then 1st each time; thread 1's next 40 are new, and
  // by then its first depth has left the list.
  Bytes want;
  const uint64_t a = 0x7ffd1000 - 0x80, b = 0x7ffd1000 - 0x40, c = 0x7ffd1000;
  const auto fresh = [&](uint64_t sp, uint64_t latest) {
    PutVarint(want, 0);
    PutSigned(want, static_cast<int64_t>(sp - latest));
  };
  fresh(a, 0);
  fresh(0x7ffe2000, 0);
  fresh(b, a);
  PutVarint(want, 1);
  fresh(c, b);
  PutVarint(want, 1);
  for (int i = 3; i < 12; ++i) {
    PutVarint(want, i % 2 == 1 ? 2 : 3);
    PutVarint(want, 1);
  }
  fresh(0x7ff00000, b);
  for (uint64_t i = 1; i < kRecentStackPointers + 8; ++i)
    fresh(0x7ff00000 + 16 * i, 0x7ff00000 + 16 * (i - 1));
  fresh(c, 0x7ff00000 + 16 * (kRecentStackPointers + 7));
  EXPECT_EQ(column, want);
  auto decoded = DecodeSampleColumns(payload, table, coding);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  payload.resize(*decoded);
  EXPECT_EQ(payload, records);

  // A place past the thread's list names the column.
  Bytes crafted = records;
  ASSERT_TRUE(EncodeSampleColumns(crafted, table, coding).has_value());
  crafted[sp_at] = std::byte{5};  // thread 1's first SP: its list is empty
  const auto refused = DecodeSampleColumns(crafted, table, coding);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("user register 7"), std::string::npos)
      << refused.error().message;
}

TEST(SampleColumnsTest, CutOrGarbledPayloadsFailOrDecodeInBounds) {
  for (const ColumnCoding coding : {ColumnCoding{}, ColumnCoding{.split_time = true},
                                    ColumnCoding{.split_time = true, .recent_sp = true}}) {
    SCOPED_TRACE(::testing::Message()
                 << "split time " << coding.split_time << ", recent sp " << coding.recent_sp);
    CutOrGarbled(coding);
  }
}

void CutOrGarbled(ColumnCoding split) {
  const EventTable table(Events());
  const Chunk c = MakeChunk(table);
  Bytes encoded = c.records;
  EncodeSampleColumns(encoded, table, split);
  // Cut anywhere: an error (a footer that no longer adds up), never a crash.
  for (size_t cut = 0; cut < encoded.size(); ++cut) {
    Bytes part(encoded.begin(), encoded.begin() + cut);
    EXPECT_FALSE(DecodeSampleColumns(part, table, split).has_value()) << cut;
  }
  // A column one byte short names the column.
  {
    Bytes shorter = encoded;
    std::vector<uint32_t> sizes = ColumnSizes(encoded);
    sizes[0] -= 1;  // the time column loses its last byte to the ip column
    sizes[1] += 1;
    std::memcpy(shorter.data() + shorter.size() - kSampleColumnFooterSize, sizes.data(),
                kSampleColumnFooterSize);
    auto decoded = DecodeSampleColumns(shorter, table, split);
    ASSERT_FALSE(decoded.has_value());
    EXPECT_NE(decoded.error().message.find("time column"), std::string::npos)
        << decoded.error().message;
  }
  // Every byte flipped in turn: decoding stays in bounds (ASan checks that
  // in scripts/test_sanitized.sh) and never claims more records than the
  // payload holds; a flipped column or footer byte is mostly caught.
  size_t refused = 0;
  for (size_t i = 0; i < encoded.size(); ++i) {
    Bytes garbled = encoded;
    garbled[i] ^= std::byte{0xff};
    const auto decoded = DecodeSampleColumns(garbled, table, split);
    if (decoded) {
      EXPECT_LE(*decoded, garbled.size() - kSampleColumnFooterSize) << i;
    } else {
      ++refused;
    }
  }
  EXPECT_GE(refused, kSampleColumnFooterSize) << "every footer byte flipped breaks the sizes";
}

Bytes ReadBack(const std::string& path, uint32_t* flags) {
  auto reader = SampleFileReader::Open(path);
  EXPECT_TRUE(reader.has_value()) << reader.error().message;
  if (!reader || reader->record_chunks().size() != 1) return {};
  *flags = reader->record_chunks()[0].header.flags;
  auto payload = reader->ReadPayload(reader->record_chunks()[0]);
  EXPECT_TRUE(payload.has_value()) << payload.error().message;
  if (!payload) return {};
  return Bytes(payload->bytes().begin(), payload->bytes().end());
}

void WriteChunk(const std::string& path, const std::vector<EventDesc>& events, const Bytes& records,
                WriterOptions options) {
  auto writer = SampleFileWriter::Create(path, options);
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  (*writer)->Submit(ChunkType::kEvents, EncodeEvents(events));
  RecordsChunk chunk;
  chunk.records = records;
  chunk.record_count = 6;
  chunk.time_min = 1000;
  chunk.time_max = 1003;
  chunk.sample_time_offset = SampleTimeOffset(events[0].attr);
  (*writer)->SubmitRecords(std::move(chunk));
  ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
}

// Through the writer and the reader: compressed chunks hold columns, stored
// ones do not, and reading gives back the kernel's records byte for byte.
// A chunk whose columns would pass the readers' limit goes as plain records
// with time deltas.
TEST(SampleColumnsTest, WrittenFilesReadBackAsTheKernelWroteThem) {
  std::string dir = ::testing::TempDir() + "sample_columns.XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::vector<EventDesc> events = Events();
  const Chunk c = MakeChunk(EventTable(events));
  struct Case {
    int level;
    uint64_t limit;
    uint32_t want_flags;
  };
  const uint32_t time_deltas = kChunkFlagSampleTimeDeltas | SampleTimeOffset(events[0].attr)
                                                                << kChunkTimeOffsetShift;
  for (const Case& k :
       {Case{1, 1 << 20,
             kChunkFlagSampleColumns | kChunkFlagSplitTimeColumn | kChunkFlagRecentStackPointers},
        Case{0, 1 << 20, 0}, Case{1, c.records.size(), time_deltas}}) {
    const std::string path =
        dir + "/case" + std::to_string(k.level) + "_" + std::to_string(k.limit) + ".data";
    WriteChunk(path, events, c.records,
               WriterOptions{.zstd_level = k.level, .max_chunk_raw_size = k.limit});
    uint32_t flags = 0;
    EXPECT_EQ(ReadBack(path, &flags), c.records) << k.level << " " << k.limit;
    EXPECT_EQ(flags, k.want_flags) << k.level << " " << k.limit;
  }
  std::filesystem::remove_all(dir);
}

// A records chunk's zstd payload is several frames (kChunkFlagSplitTimeColumn):
// a frame cut short, bytes after the last frame, or the split flag without
// the columns' are errors naming the chunk's offset, with checksums that
// agree (a crafted file).
TEST(SampleColumnsTest, AChunksFramesMustAddUpAndItsFlagsAgree) {
  std::string dir = ::testing::TempDir() + "sample_frames.XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::vector<EventDesc> events = Events();
  const Chunk c = MakeChunk(EventTable(events));
  const std::string path = dir + "/frames.data";
  WriteChunk(path, events, c.records, WriterOptions{.zstd_level = 1});
  std::ifstream in(path, std::ios::binary);
  Bytes bytes;
  for (char ch; in.get(ch);) bytes.push_back(static_cast<std::byte>(ch));
  auto original = SampleFileReader::Open(path);
  ASSERT_TRUE(original.has_value());
  const ChunkRef ref = original->record_chunks()[0];
  ASSERT_NE(ref.header.flags & kChunkFlagSplitTimeColumn, 0u);
  const size_t payload_at = ref.offset + sizeof(ChunkHeader);
  const Bytes stored(
      bytes.begin() + static_cast<std::ptrdiff_t>(payload_at),
      bytes.begin() + static_cast<std::ptrdiff_t>(payload_at + ref.header.stored_size));
  // Chunk 0 with `header` and `payload`, its checksum made to agree: the
  // reader's error.
  const auto read = [&](const std::string& name, ChunkHeader header, const Bytes& payload) {
    header.stored_size = payload.size();
    header.crc32 = 0;
    header.crc32 = Crc32(payload, Crc32(std::as_bytes(std::span(&header, 1))));
    Bytes changed(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(ref.offset));
    const auto* h = reinterpret_cast<const std::byte*>(&header);
    changed.insert(changed.end(), h, h + sizeof(header));
    changed.insert(changed.end(), payload.begin(), payload.end());
    changed.insert(changed.end(),
                   bytes.begin() + static_cast<std::ptrdiff_t>(payload_at + ref.header.stored_size),
                   bytes.end());
    const std::string changed_path = dir + "/" + name;
    std::ofstream(changed_path, std::ios::binary)
        .write(reinterpret_cast<const char*>(changed.data()),
               static_cast<std::streamsize>(changed.size()));
    auto reader = SampleFileReader::Open(changed_path);
    EXPECT_TRUE(reader.has_value()) << reader.error().message;
    if (!reader || reader->record_chunks().empty()) return std::string("not opened");
    auto payload_read = reader->ReadPayload(reader->record_chunks()[0]);
    EXPECT_FALSE(payload_read.has_value()) << name;
    return payload_read ? std::string() : payload_read.error().message;
  };
  const std::string offset = "offset " + std::to_string(ref.offset);
  const std::string cut = read("cut", ref.header, Bytes(stored.begin(), stored.end() - 3));
  EXPECT_NE(cut.find("zstd"), std::string::npos) << cut;
  EXPECT_NE(cut.find(offset), std::string::npos) << cut;
  Bytes trailing = stored;
  trailing.insert(trailing.end(), {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}});
  const std::string after = read("trailing", ref.header, trailing);
  EXPECT_NE(after.find("no valid zstd frame"), std::string::npos) << after;
  ChunkHeader no_columns = ref.header;
  no_columns.flags &= ~kChunkFlagSampleColumns;
  const std::string flags = read("flags", no_columns, stored);
  EXPECT_NE(flags.find("inconsistent"), std::string::npos) << flags;
  std::filesystem::remove_all(dir);
}

// A chunk as writers before kChunkFlagRecentStackPointers wrote it
// (columns, the time split, stack pointers as differences) reads back as
// the kernel wrote it.
TEST(SampleColumnsTest, ChunksOfEarlierWritersStillRead) {
  std::string dir = ::testing::TempDir() + "sample_old_chunks.XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::vector<EventDesc> events = Events();
  const Chunk c = MakeChunk(EventTable(events));
  const std::string path = dir + "/new.data";
  WriteChunk(path, events, c.records, WriterOptions{.zstd_level = 1});
  std::ifstream in(path, std::ios::binary);
  Bytes bytes;
  for (char ch; in.get(ch);) bytes.push_back(static_cast<std::byte>(ch));
  auto written = SampleFileReader::Open(path);
  ASSERT_TRUE(written.has_value());
  const ChunkRef ref = written->record_chunks()[0];
  Bytes encoded = c.records;
  ASSERT_TRUE(EncodeSampleColumns(encoded, EventTable(events), {.split_time = true}).has_value());
  Bytes stored(ZSTD_compressBound(encoded.size()));
  stored.resize(ZSTD_compress(stored.data(), stored.size(), encoded.data(), encoded.size(), 1));
  ChunkHeader header = ref.header;
  header.flags = kChunkFlagSampleColumns | kChunkFlagSplitTimeColumn;
  header.raw_size = encoded.size();
  header.stored_size = stored.size();
  header.crc32 = 0;
  header.crc32 = Crc32(stored, Crc32(std::as_bytes(std::span(&header, 1))));
  Bytes old(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(ref.offset));
  const auto* h = reinterpret_cast<const std::byte*>(&header);
  old.insert(old.end(), h, h + sizeof(header));
  old.insert(old.end(), stored.begin(), stored.end());
  old.insert(old.end(),
             bytes.begin() + static_cast<std::ptrdiff_t>(ref.offset + sizeof(ChunkHeader) +
                                                         ref.header.stored_size),
             bytes.end());
  const std::string old_path = dir + "/old.data";
  std::ofstream(old_path, std::ios::binary)
      .write(reinterpret_cast<const char*>(old.data()), static_cast<std::streamsize>(old.size()));
  uint32_t flags = 0;
  EXPECT_EQ(ReadBack(old_path, &flags), c.records);
  EXPECT_EQ(flags, kChunkFlagSampleColumns | kChunkFlagSplitTimeColumn);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sample::format
