#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "libsample/crc32.h"
#include "libsample/perf/perf_record.h"
#include "tests/unit/synthetic_records.h"

namespace sample::format {
namespace {

namespace st = sample::testing;
using st::Bytes;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                 PERF_SAMPLE_CALLCHAIN;
constexpr uint16_t kUnknownChunkType = 9;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::vector<EventDesc> TestEvents() {
  EventDesc cycles;
  cycles.attr = st::MakeAttr(kSampleType, true);
  cycles.attr.type = PERF_TYPE_HARDWARE;
  cycles.attr.config = PERF_COUNT_HW_CPU_CYCLES;
  cycles.attr.sample_freq = 4000;
  cycles.attr.freq = 1;
  cycles.attr.exclude_kernel = 1;
  cycles.name = "cycles:u";  // exactly 8 bytes: no padding after the name
  cycles.ids = {100, 101, 102, 103};
  EventDesc clock;
  clock.attr = st::MakeAttr(kSampleType, true);
  clock.name = "cpu-clock";
  clock.ids = {200};
  EventDesc empty;  // no name, no ids
  empty.attr = st::MakeAttr(PERF_SAMPLE_IP, false);
  return {cycles, clock, empty};
}

// A records chunk payload: sideband and samples from `cpu`, times from `t0`.
Bytes RecordsPayload(uint32_t cpu, uint64_t t0, uint64_t* count,
                     uint64_t sample_type = kSampleType) {
  const auto attr = st::MakeAttr(sample_type, true);
  const st::SampleIdFields sid{
      .pid = 10, .tid = 11, .time = t0, .id = 100, .stream_id = 0, .cpu = cpu};
  Bytes out;
  st::Append(out, st::MakeComm(attr, 10, 11, "worker", false, sid));
  st::Append(out,
             st::MakeMmap2(attr, st::MakeMmap2Fields("/bin/app", 10, 11, 0x400000, 0x1000), sid));
  *count = 2;
  for (uint64_t i = 0; i < 40 + cpu * 7; ++i, ++*count) {
    st::SampleFields s;
    s.id = 101;
    s.ip = 0x400100 + i * 8;
    s.pid = 10;
    s.tid = 11;
    s.time = t0 + i + 1;
    s.cpu = cpu;
    s.period = 1000;
    s.callchain = {PERF_CONTEXT_USER, s.ip, 0x400050};
    st::Append(out, st::MakeSample(attr, s));
  }
  st::Append(out, st::MakeLost(attr, 100, 3, sid));
  ++*count;
  return out;
}

Bytes ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

void WriteFileBytes(const std::string& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// What a test wrote, to compare the reader against.
struct Expected {
  std::vector<EventDesc> events = TestEvents();
  Metadata metadata = {{"hostname", "box"},
                       {"arch", "x86_64"},
                       {"cmdline", "sample record ls"},
                       {"empty", ""},
                       {"", "no key"}};
  std::vector<Bytes> payloads;  // records chunks
  std::vector<uint64_t> counts, time_min, time_max;
  Trailer trailer;
};

class SampleFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "sample_file_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }

  // events, metadata, records x3 with an unknown chunk type in between, trailer.
  Expected WriteFile(const std::string& path, int zstd_level) {
    Expected e;
    auto writer = SampleFileWriter::Create(path, WriterOptions{.zstd_level = zstd_level});
    EXPECT_TRUE(writer.has_value()) << writer.error().message;
    if (!writer) return e;
    (*writer)->Submit(ChunkType::kEvents, EncodeEvents(e.events));
    (*writer)->Submit(ChunkType::kMetadata, EncodeMetadata(e.metadata));
    uint64_t raw = 0;
    for (uint32_t cpu = 0; cpu < 3; ++cpu) {
      if (cpu == 1) (*writer)->Submit(static_cast<ChunkType>(kUnknownChunkType), Bytes(24));
      uint64_t count = 0;
      const uint64_t t0 = 1000000 * (cpu + 1);
      e.payloads.push_back(RecordsPayload(cpu, t0, &count));
      e.counts.push_back(count);
      e.time_min.push_back(t0);
      e.time_max.push_back(t0 + count);
      raw += e.payloads.back().size();
      RecordsChunk chunk;
      chunk.records = e.payloads.back();
      chunk.record_count = count;
      chunk.time_min = t0;
      chunk.time_max = t0 + count;
      chunk.sample_time_offset = SampleTimeOffset(st::MakeAttr(kSampleType, true));
      (*writer)->SubmitRecords(std::move(chunk));
    }
    e.trailer.header.record_count = e.counts[0] + e.counts[1] + e.counts[2];
    e.trailer.header.sample_count = 12345;
    e.trailer.header.lost_samples = 9;
    e.trailer.header.start_clock_ns = 1000000;
    e.trailer.header.end_clock_ns = 4000000;
    e.trailer.header.bytes_raw = raw;
    e.trailer.cpus = {{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, {11, 12, 13, 14, 15}};
    auto finished = (*writer)->Finish(e.trailer);
    EXPECT_TRUE(finished.has_value()) << finished.error().message;
    EXPECT_EQ((*writer)->raw_bytes(), raw);
    EXPECT_EQ((*writer)->bytes_written(), std::filesystem::file_size(path));
    return e;
  }

  std::string dir_;
};

void ExpectEventsEqual(const EventTable& table, const std::vector<EventDesc>& want) {
  ASSERT_EQ(table.events().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const EventDesc& got = table.events()[i];
    EXPECT_EQ(std::memcmp(&got.attr, &want[i].attr, sizeof(perf_event_attr)), 0) << i;
    EXPECT_EQ(got.attr.sample_type, want[i].attr.sample_type);
    EXPECT_EQ(got.attr.config, want[i].attr.config);
    EXPECT_EQ(got.name, want[i].name);
    EXPECT_EQ(got.ids, want[i].ids);
  }
}

// The payload of record chunk `index`, as bytes.
Bytes ReadPayloadOf(const SampleFileReader& reader, size_t index) {
  auto payload = reader.ReadPayload(reader.record_chunks().at(index));
  EXPECT_TRUE(payload.has_value()) << payload.error().message;
  if (!payload) return {};
  return Bytes(payload->bytes().begin(), payload->bytes().end());
}

void ExpectPayload(const SampleFileReader& reader, const ChunkRef& chunk, const Bytes& want) {
  auto payload = reader.ReadPayload(chunk);
  ASSERT_TRUE(payload.has_value()) << payload.error().message;
  EXPECT_TRUE(std::ranges::equal(payload->bytes(), want)) << "chunk at " << chunk.offset;
}

TEST_F(SampleFileTest, RoundTrip) {
  for (int level : {1, 3, 0}) {
    const std::string path = PathOf("level" + std::to_string(level) + ".sample");
    const Expected e = WriteFile(path, level);
    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    EXPECT_TRUE(reader->finalized());
    EXPECT_TRUE(reader->warnings().empty()) << reader->warnings().front();
    EXPECT_EQ(reader->file_size(), std::filesystem::file_size(path));
    EXPECT_EQ(reader->valid_end(), reader->file_size());
    EXPECT_EQ(std::memcmp(reader->file_header().magic, "SAMPLEDT", 8), 0);
    EXPECT_EQ(reader->file_header().version, kFileVersion);
    ExpectEventsEqual(reader->events(), e.events);
    EXPECT_EQ(reader->events().EventIndexForId(200), 1u);
    EXPECT_EQ(reader->metadata(), e.metadata);
    EXPECT_EQ(FindMetadata(reader->metadata(), "cmdline"), "sample record ls");
    EXPECT_EQ(FindMetadata(reader->metadata(), "missing"), std::nullopt);

    const auto& chunks = reader->record_chunks();
    ASSERT_EQ(chunks.size(), 3u);
    for (size_t i = 0; i < chunks.size(); ++i) {
      const ChunkHeader& h = chunks[i].header;
      EXPECT_EQ(h.type, static_cast<uint16_t>(ChunkType::kRecords));
      EXPECT_EQ(h.compression,
                static_cast<uint16_t>(level == 0 ? Compression::kNone : Compression::kZstd));
      EXPECT_EQ(h.raw_size, e.payloads[i].size());
      if (level == 0) {
        EXPECT_EQ(h.stored_size, h.raw_size);
      } else {
        EXPECT_LT(h.stored_size, h.raw_size);  // the records compress
      }
      // Compressed record chunks store sample times as deltas; reading
      // gives back the kernel's records byte for byte (ExpectPayload).
      // (Not in columns: the third event has no sample id, so no sample
      // can be told to be an event's. sample_columns_test.cc tests those.)
      EXPECT_EQ(h.flags, level == 0 ? 0u
                                    : kChunkFlagSampleTimeDeltas |
                                          (SampleTimeOffset(st::MakeAttr(kSampleType, true))
                                           << kChunkTimeOffsetShift));
      EXPECT_EQ(h.record_count, e.counts[i]);
      EXPECT_EQ(h.time_min, e.time_min[i]);
      EXPECT_EQ(h.time_max, e.time_max[i]);
      ExpectPayload(*reader, chunks[i], e.payloads[i]);
    }

    ASSERT_TRUE(reader->trailer().has_value());
    const Trailer& t = *reader->trailer();
    EXPECT_EQ(t.header.record_count, e.trailer.header.record_count);
    EXPECT_EQ(t.header.sample_count, 12345u);
    EXPECT_EQ(t.header.lost_samples, 9u);
    EXPECT_EQ(t.header.start_clock_ns, 1000000u);
    EXPECT_EQ(t.header.end_clock_ns, 4000000u);
    EXPECT_EQ(t.header.bytes_raw, e.trailer.header.bytes_raw);
    EXPECT_EQ(t.header.cpu_count, 3u);
    ASSERT_EQ(t.cpus.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(std::memcmp(&t.cpus[i], &e.trailer.cpus[i], sizeof(TrailerCpu)), 0) << i;
    }
    // Table of contents: events, metadata, records, unknown, records, records.
    EXPECT_EQ(t.header.chunk_count, 6u);
    ASSERT_EQ(t.chunk_offsets.size(), 6u);
    EXPECT_EQ(t.chunk_offsets[0], sizeof(FileHeader));
    EXPECT_EQ(t.chunk_offsets[2], chunks[0].offset);
    EXPECT_EQ(t.chunk_offsets[4], chunks[1].offset);
    EXPECT_EQ(t.chunk_offsets[5], chunks[2].offset);
  }
}

// Samples whose chains vary as a program's do: many distinct, each often
// again (an LCG picks them), `samples` of them.
Bytes VariedSamples(size_t samples) {
  const auto attr = st::MakeAttr(kSampleType, true);
  Bytes out;
  uint64_t state = 12345;
  const auto next = [&state](uint64_t n) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return (state >> 33) % n;
  };
  for (size_t i = 0; i < samples; ++i) {
    st::SampleFields s;
    s.id = 101;
    s.pid = 10;
    s.tid = 11 + next(4);
    s.time = 1000000 + i * 250000 + next(5000);
    s.period = 250000;
    s.ip = 0x400000 + next(4096);
    s.callchain = {PERF_CONTEXT_USER, s.ip};
    for (uint64_t depth = 2 + next(12); depth > 0; --depth) {
      s.callchain.push_back(0x401000 + next(64) * 0x40 + depth);
    }
    st::Append(out, st::MakeSample(attr, s));
  }
  return out;
}

// WriterOptions::small_chunk_level: a records chunk of at most
// kSmallChunkSize bytes is compressed at that level (smaller at 6 than at
// 1, and as a writer at level 6 compresses it), a larger one at
// zstd_level (the same bytes either way); both read back as written.
TEST_F(SampleFileTest, SmallChunksAtTheirOwnLevel) {
  // The records chunk's header: stored_size as compressed, raw_size as
  // compressed from (the columns).
  const auto chunk_of = [&](const std::string& name, const Bytes& records, int small_level,
                            int level = 1) {
    const std::string path =
        PathOf(name + std::to_string(level) + std::to_string(small_level) + ".sample");
    auto writer = SampleFileWriter::Create(
        path, WriterOptions{.zstd_level = level, .small_chunk_level = small_level});
    EXPECT_TRUE(writer.has_value()) << writer.error().message;
    if (!writer) return ChunkHeader{};
    (*writer)->Submit(ChunkType::kEvents, EncodeEvents(TestEvents()));
    RecordsChunk chunk;
    chunk.records = records;
    chunk.record_count = records.size();
    (*writer)->SubmitRecords(std::move(chunk));
    EXPECT_TRUE((*writer)->Finish(Trailer{}).has_value());
    auto reader = SampleFileReader::Open(path);
    EXPECT_TRUE(reader.has_value()) << reader.error().message;
    if (!reader || reader->record_chunks().size() != 1) return ChunkHeader{};
    EXPECT_EQ(ReadPayloadOf(*reader, 0), records) << path;
    return reader->record_chunks()[0].header;
  };
  const Bytes small = VariedSamples(600);
  const ChunkHeader small6 = chunk_of("small", small, 6);
  ASSERT_LE(small6.raw_size, WriterOptions::kSmallChunkSize);
  ASSERT_GT(small6.raw_size, WriterOptions::kSmallChunkSize / 8);
  EXPECT_LT(small6.stored_size, chunk_of("small", small, 0).stored_size);
  // Level 6 as level 6 is: its own match finder, not level 1's.
  EXPECT_EQ(small6.stored_size, chunk_of("small", small, 0, 6).stored_size);
  const Bytes large = VariedSamples(6000);
  const ChunkHeader large6 = chunk_of("large", large, 6);
  ASSERT_GT(large6.raw_size, WriterOptions::kSmallChunkSize);
  EXPECT_EQ(large6.stored_size, chunk_of("large", large, 0).stored_size);
}

// A chunk with nothing in it (a recording without build-ids) is checked
// as written, compressed or not.
TEST_F(SampleFileTest, EmptyChunksPassTheirChecksum) {
  for (int level : {0, 3}) {
    const std::string path = PathOf("empty" + std::to_string(level) + ".sample");
    auto writer = SampleFileWriter::Create(path, WriterOptions{.zstd_level = level});
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    (*writer)->Submit(ChunkType::kEvents, EncodeEvents(TestEvents()));
    (*writer)->Submit(ChunkType::kBuildIds, {});
    (*writer)->Submit(ChunkType::kMetadata, {});
    ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    EXPECT_TRUE(reader->warnings().empty()) << reader->warnings().front();
  }
}

// Ring buffers without PERF_SAMPLE_CPU: the writer inserts each run's CPU,
// and the file holds what the kernel writes with the field.
TEST_F(SampleFileTest, WriterInsertsTheCpuOfEachRun) {
  constexpr uint64_t kRingType = kSampleType & ~uint64_t{PERF_SAMPLE_CPU};
  for (int level : {1, 0}) {
    const std::string path = PathOf("cpus" + std::to_string(level) + ".sample");
    auto writer = SampleFileWriter::Create(path, WriterOptions{.zstd_level = level});
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    uint64_t count = 0, n = 0;
    Bytes ring = RecordsPayload(2, 1000, &n, kRingType);
    count += n;
    const size_t first_run = ring.size();
    st::Append(ring, RecordsPayload(0, 2000, &n, kRingType));
    count += n;
    Bytes want = RecordsPayload(2, 1000, &n);
    st::Append(want, RecordsPayload(0, 2000, &n));
    RecordsChunk chunk;
    chunk.records = ring;
    chunk.record_count = count;
    chunk.sample_time_offset = SampleTimeOffset(st::MakeAttr(kSampleType, true));
    chunk.cpu_field = CpuFieldPlaceOf(st::MakeAttr(kSampleType, true));
    chunk.cpu_runs = {{first_run, 2}, {ring.size(), 0}};
    (*writer)->Submit(ChunkType::kEvents, EncodeEvents(TestEvents()));
    if (level == 0) {
      // The draining thread's way: never waits; nothing else holds the
      // lock for long here, so it succeeds within a few tries.
      int tries = 0;
      while (!(*writer)->TrySubmitRecords(chunk)) {
        ASSERT_FALSE(chunk.records.empty()) << "a failed try keeps the records";
        ASSERT_LT(++tries, 1000000);
      }
      EXPECT_TRUE(chunk.records.empty());  // handed over
    } else {
      (*writer)->SubmitRecords(std::move(chunk));
    }
    Trailer trailer;
    ASSERT_TRUE((*writer)->Finish(trailer));
    EXPECT_EQ((*writer)->raw_bytes(), want.size());  // what the file holds, not the ring
    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    ASSERT_EQ(reader->record_chunks().size(), 1u);
    EXPECT_EQ(reader->record_chunks()[0].header.raw_size, want.size());
    ExpectPayload(*reader, reader->record_chunks()[0], want);
  }
}

// A drain can hand over more than the writer's chunk limit (every ring's
// contents at a large -m): the writer splits it at record boundaries into
// chunks within the limit, the CPUs inserted and the times kept, so the
// reader gets every record back in order.
TEST_F(SampleFileTest, WriterSplitsRecordsChunksOverItsLimit) {
  constexpr uint64_t kRingType = kSampleType & ~uint64_t{PERF_SAMPLE_CPU};
  for (int level : {1, 0}) {
    const std::string path = PathOf("split" + std::to_string(level) + ".sample");
    constexpr uint64_t kLimit = 4096;
    auto writer =
        SampleFileWriter::Create(path, WriterOptions{.zstd_level = level, .max_chunk_raw_size = kLimit});
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    uint64_t count = 0, n = 0;
    Bytes ring;
    Bytes want;
    for (int round = 0; round < 20; ++round) {
      st::Append(ring, RecordsPayload(0, 1000 + round * 100, &n, kRingType));
      count += n;
      st::Append(want, RecordsPayload(0, 1000 + round * 100, &n));
    }
    ASSERT_GT(want.size(), 3 * kLimit);
    RecordsChunk chunk;
    chunk.records = ring;
    chunk.record_count = count;
    chunk.time_min = 1;
    chunk.time_max = 99999;
    chunk.sample_time_offset = SampleTimeOffset(st::MakeAttr(kSampleType, true));
    chunk.cpu_field = CpuFieldPlaceOf(st::MakeAttr(kSampleType, true));
    chunk.cpu_runs = {{ring.size(), 0}};
    (*writer)->Submit(ChunkType::kEvents, EncodeEvents(TestEvents()));
    (*writer)->SubmitRecords(std::move(chunk));
    ASSERT_TRUE((*writer)->Finish(Trailer{}));
    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    EXPECT_EQ(reader->file_header().max_chunk_raw_size, kLimit);
    ASSERT_GT(reader->record_chunks().size(), 3u);
    Bytes got;
    uint64_t records = 0;
    for (const ChunkRef& ref : reader->record_chunks()) {
      EXPECT_LE(ref.header.raw_size, kLimit);
      EXPECT_EQ(ref.header.time_min, 1u);
      records += ref.header.record_count;
      st::Append(got, ReadPayloadOf(*reader, &ref - reader->record_chunks().data()));
    }
    EXPECT_EQ(records, count);
    EXPECT_TRUE(std::ranges::equal(got, want));
  }
}

TEST_F(SampleFileTest, AnUncompressedSizeTheStoredBytesCannotHoldIsAnErrorBeforeAllocating) {
  // Found by the sample_file fuzz target: a header claiming 2.6 GB made the
  // reader allocate that much before looking at the payload. Three claims,
  // each refused before any allocation: over the file header's chunk limit,
  // beyond any compression ratio, and one the stored bytes do not hold.
  struct Claim {
    uint64_t raw_size;
    std::string message;
  };
  for (int level : {1, 0}) {
    const std::string path = PathOf("claim" + std::to_string(level) + ".sample");
    WriteFile(path, level);
    Bytes bytes = ReadFileBytes(path);
    auto original = SampleFileReader::Open(path);
    ASSERT_TRUE(original.has_value());
    const ChunkRef ref = original->record_chunks()[0];
    const std::vector<Claim> claims = {
        {uint64_t{3} << 30, "over the 67108864 the file's header allows"},
        {uint64_t{60} << 20, "more than 8192 times as many"},
        {ref.header.stored_size + 100, level == 0 ? "sizes differ" : "zstd frames hold"},
    };
    for (const Claim& claim : claims) {
      ChunkHeader header = ref.header;
      header.raw_size = claim.raw_size;
      header.crc32 = 0;  // a consistent checksum: only the size is wrong
      const std::span<const std::byte> payload =
          std::span(bytes).subspan(ref.offset + sizeof(ChunkHeader), header.stored_size);
      header.crc32 = Crc32(payload, Crc32(std::as_bytes(std::span(&header, 1))));
      Bytes changed = bytes;
      std::memcpy(changed.data() + ref.offset, &header, sizeof(header));
      const std::string claimed = PathOf("claimed" + std::to_string(level));
      WriteFileBytes(claimed, changed);

      auto reader = SampleFileReader::Open(claimed);
      ASSERT_TRUE(reader.has_value()) << reader.error().message;
      auto read = reader->ReadPayload(reader->record_chunks()[0]);
      ASSERT_FALSE(read.has_value());
      EXPECT_TRUE(Contains(read.error().message, claim.message)) << read.error().message;
      EXPECT_TRUE(Contains(read.error().message, std::to_string(claim.raw_size)));
      EXPECT_TRUE(Contains(read.error().message, "offset " + std::to_string(ref.offset)));
      ExpectPayload(*reader, reader->record_chunks()[1], ReadPayloadOf(*original, 1));
    }
  }
}

// The header's chunk limit is itself bounded: a file may not declare that
// its chunks are as large as it likes.
TEST_F(SampleFileTest, AHeaderAllowingHugeChunksIsRefused) {
  const std::string path = PathOf("limit.sample");
  WriteFile(path, 1);
  Bytes bytes = ReadFileBytes(path);
  FileHeader header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  EXPECT_EQ(header.max_chunk_raw_size, kWriterMaxChunkRawSize);
  header.max_chunk_raw_size = kReaderMaxChunkRawSize + 1;
  std::memcpy(bytes.data(), &header, sizeof(header));
  WriteFileBytes(path, bytes);
  auto reader = SampleFileReader::Open(path);
  ASSERT_FALSE(reader.has_value());
  EXPECT_TRUE(Contains(reader.error().message, "offset 32: the header allows chunks of"))
      << reader.error().message;
}

TEST_F(SampleFileTest, VdsoImageAndItsBuildIdRoundTrip) {
  // Any bytes will do for the format: the image is stored as it is.
  Bytes image(8192 + 24);
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::byte>(i * 7 + i / 256);
  const Metadata build_ids = {{"/bin/app", "00ff"}, {"[vdso]", "1234abcd"}};
  for (int level : {1, 0}) {
    const std::string path = PathOf("vdso" + std::to_string(level) + ".sample");
    auto writer = SampleFileWriter::Create(path, WriterOptions{.zstd_level = level});
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    (*writer)->Submit(ChunkType::kEvents, EncodeEvents(TestEvents()));
    (*writer)->Submit(ChunkType::kBuildIds, EncodeMetadata(build_ids));
    (*writer)->Submit(ChunkType::kVdso, image);
    ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
    writer->reset();

    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    EXPECT_TRUE(reader->warnings().empty()) << reader->warnings().front();
    EXPECT_TRUE(std::ranges::equal(reader->vdso_image(), image));
    EXPECT_EQ(FindMetadata(reader->build_ids(), "[vdso]"), "1234abcd");
    EXPECT_TRUE(reader->record_chunks().empty());  // not mistaken for records

    // A corrupt image is skipped with a warning; the file still opens.
    Bytes bytes = ReadFileBytes(path);
    const uint64_t vdso_chunk = reader->trailer()->chunk_offsets.at(2);
    bytes[vdso_chunk + sizeof(ChunkHeader) + 5] ^= std::byte{0x40};
    const std::string flipped = PathOf("vdso-flipped" + std::to_string(level));
    WriteFileBytes(flipped, bytes);
    auto damaged = SampleFileReader::Open(flipped);
    ASSERT_TRUE(damaged.has_value()) << damaged.error().message;
    EXPECT_TRUE(damaged->vdso_image().empty());
    EXPECT_TRUE(std::ranges::any_of(damaged->warnings(), [](const std::string& w) {
      return Contains(w, "[vdso] image skipped") && Contains(w, "checksum");
    })) << ::testing::PrintToString(damaged->warnings());
  }
  // Files written before the chunk existed have no image.
  const std::string old = PathOf("old.sample");
  WriteFile(old, 1);
  auto reader = SampleFileReader::Open(old);
  ASSERT_TRUE(reader.has_value());
  EXPECT_TRUE(reader->vdso_image().empty());
}

Counts TestCounts() {
  Counts counts;
  counts.source = kCountsFromCounting;
  counts.elapsed_ns = 300'000'000;
  EventCounts clock;
  clock.name = "task-clock";
  clock.attr.type = PERF_TYPE_SOFTWARE;
  clock.attr.config = PERF_COUNT_SW_TASK_CLOCK;
  clock.count = 250'000'000;
  clock.time_enabled = 300'000'000;
  clock.time_running = 200'000'000;
  clock.intervals = {{100'000'000, 90'000'000, 100'000'000, 70'000'000},
                     {200'000'000, 180'000'000, 200'000'000, 140'000'000}};
  EventCounts cycles;  // 6 bytes of name: padded
  cycles.name = "cycles";
  cycles.supported = false;
  counts.events = {clock, cycles};
  return counts;
}

void ExpectSameCounts(const Counts& a, const Counts& b) {
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.elapsed_ns, b.elapsed_ns);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    const EventCounts &x = a.events[i], &y = b.events[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(std::memcmp(&x.attr, &y.attr, sizeof(x.attr)), 0) << x.name;
    EXPECT_EQ(x.supported, y.supported) << x.name;
    EXPECT_EQ(x.count, y.count) << x.name;
    EXPECT_EQ(x.time_enabled, y.time_enabled) << x.name;
    EXPECT_EQ(x.time_running, y.time_running) << x.name;
    ASSERT_EQ(x.intervals.size(), y.intervals.size()) << x.name;
    for (size_t k = 0; k < x.intervals.size(); ++k) {
      EXPECT_EQ(x.intervals[k].time_ns, y.intervals[k].time_ns);
      EXPECT_EQ(x.intervals[k].count, y.intervals[k].count);
      EXPECT_EQ(x.intervals[k].time_enabled, y.intervals[k].time_enabled);
      EXPECT_EQ(x.intervals[k].time_running, y.intervals[k].time_running);
    }
  }
}

TEST_F(SampleFileTest, CountsRoundTripAndOldFilesHaveNone) {
  const std::string path = PathOf("counts.sample");
  auto writer = SampleFileWriter::Create(path, WriterOptions{});
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  (*writer)->Submit(ChunkType::kEvents, EncodeEvents(TestEvents()));
  (*writer)->Submit(ChunkType::kCounts, EncodeCounts(TestCounts()));
  ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
  writer->reset();
  auto reader = SampleFileReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  EXPECT_TRUE(reader->warnings().empty()) << reader->warnings().front();
  ASSERT_TRUE(reader->counts().has_value());
  ExpectSameCounts(*reader->counts(), TestCounts());
  EXPECT_TRUE(reader->record_chunks().empty());  // not mistaken for records

  const std::string old = PathOf("old-counts.sample");
  WriteFile(old, 1);
  auto old_reader = SampleFileReader::Open(old);
  ASSERT_TRUE(old_reader.has_value());
  EXPECT_FALSE(old_reader->counts().has_value());
}

// The offsets where each chunk starts, plus the end of the file.
std::vector<uint64_t> ChunkBoundaries(const SampleFileReader& reader) {
  std::vector<uint64_t> b = reader.trailer()->chunk_offsets;
  const ChunkRef& last = reader.record_chunks().back();
  b.push_back(last.offset + sizeof(ChunkHeader) + last.header.stored_size);  // the trailer
  b.push_back(reader.file_size());
  return b;
}

TEST_F(SampleFileTest, TruncatedCopiesRecoverEveryCompleteChunk) {
  for (int level : {1, 0}) {
    const std::string path = PathOf("full" + std::to_string(level) + ".sample");
    const Expected e = WriteFile(path, level);
    const Bytes full = ReadFileBytes(path);
    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value());
    const std::vector<uint64_t> bounds = ChunkBoundaries(*reader);
    const uint64_t events_end = bounds[1];
    std::vector<uint64_t> record_ends;
    for (const ChunkRef& c : reader->record_chunks()) {
      record_ends.push_back(c.offset + sizeof(ChunkHeader) + c.header.stored_size);
    }
    std::set<uint64_t> cuts = {0, 1, 8, 12, 32, 63};
    for (size_t i = 0; i + 1 < bounds.size(); ++i) {
      const uint64_t start = bounds[i], end = bounds[i + 1];
      for (uint64_t c : {start, start + 1, start + 20, start + sizeof(ChunkHeader) - 1,
                         start + sizeof(ChunkHeader), start + sizeof(ChunkHeader) + 1,
                         (start + sizeof(ChunkHeader) + end) / 2, end - 1}) {
        if (c < end) cuts.insert(c);
      }
    }
    for (uint64_t cut : cuts) {
      SCOPED_TRACE("level " + std::to_string(level) + ", cut at " + std::to_string(cut));
      const std::string copy = PathOf("cut" + std::to_string(level) + "_" + std::to_string(cut));
      WriteFileBytes(copy, std::span(full).first(cut));
      auto torn = SampleFileReader::Open(copy);
      if (cut < sizeof(FileHeader)) {
        ASSERT_FALSE(torn.has_value());
        EXPECT_TRUE(Contains(torn.error().message, "offset 0")) << torn.error().message;
        continue;
      }
      if (cut < events_end) {
        EXPECT_FALSE(torn.has_value());  // no event descriptions: nothing to read
        continue;
      }
      ASSERT_TRUE(torn.has_value()) << torn.error().message;
      EXPECT_FALSE(torn->finalized());
      EXPECT_TRUE(std::ranges::any_of(
          torn->warnings(), [](const std::string& w) { return Contains(w, "not finalized"); }));
      ExpectEventsEqual(torn->events(), e.events);
      EXPECT_LE(torn->valid_end(), cut);
      size_t complete = 0;
      while (complete < record_ends.size() && record_ends[complete] <= cut) ++complete;
      ASSERT_EQ(torn->record_chunks().size(), complete);
      for (size_t i = 0; i < complete; ++i) {
        EXPECT_EQ(torn->record_chunks()[i].offset, reader->record_chunks()[i].offset);
        ExpectPayload(*torn, torn->record_chunks()[i], e.payloads[i]);
      }
    }
  }
}

TEST_F(SampleFileTest, FlippedPayloadByteFailsTheChecksumOfThatChunkOnly) {
  for (int level : {1, 0}) {
    const std::string path = PathOf("flip" + std::to_string(level) + ".sample");
    const Expected e = WriteFile(path, level);
    Bytes bytes = ReadFileBytes(path);
    auto original = SampleFileReader::Open(path);
    ASSERT_TRUE(original.has_value());
    const ChunkRef victim = original->record_chunks()[1];
    bytes[victim.offset + sizeof(ChunkHeader) + victim.header.stored_size / 2] ^= std::byte{0x10};
    const std::string copy = PathOf("flipped" + std::to_string(level));
    WriteFileBytes(copy, bytes);

    auto reader = SampleFileReader::Open(copy);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    ASSERT_EQ(reader->record_chunks().size(), 3u);
    auto bad = reader->ReadPayload(reader->record_chunks()[1]);
    ASSERT_FALSE(bad.has_value());
    EXPECT_TRUE(Contains(bad.error().message, "checksum")) << bad.error().message;
    EXPECT_TRUE(Contains(bad.error().message, std::to_string(victim.offset)))
        << bad.error().message;
    ExpectPayload(*reader, reader->record_chunks()[0], e.payloads[0]);
    ExpectPayload(*reader, reader->record_chunks()[2], e.payloads[2]);
  }
}

TEST_F(SampleFileTest, ChunkFlagsFromANewerWriterSkipThatChunkWithAMessage) {
  const std::string path = PathOf("flags.sample");
  const Expected e = WriteFile(path, 1);
  Bytes bytes = ReadFileBytes(path);
  auto original = SampleFileReader::Open(path);
  ASSERT_TRUE(original.has_value());
  const ChunkRef victim = original->record_chunks()[1];
  // A flag bit nobody defined yet, with a checksum that matches it.
  ChunkHeader header = victim.header;
  header.flags |= 1u << 20;
  header.crc32 = 0;
  const std::span<const std::byte> stored(bytes.data() + victim.offset + sizeof(ChunkHeader),
                                          header.stored_size);
  header.crc32 = Crc32(stored, Crc32(std::as_bytes(std::span(&header, 1))));
  std::memcpy(bytes.data() + victim.offset, &header, sizeof(header));
  const std::string copy = PathOf("flags-newer.sample");
  WriteFileBytes(copy, bytes);

  auto reader = SampleFileReader::Open(copy);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  auto bad = reader->ReadPayload(reader->record_chunks()[1]);
  ASSERT_FALSE(bad.has_value());
  EXPECT_TRUE(Contains(bad.error().message, "flags")) << bad.error().message;
  EXPECT_TRUE(Contains(bad.error().message, std::to_string(victim.offset))) << bad.error().message;
  ExpectPayload(*reader, reader->record_chunks()[0], e.payloads[0]);
  ExpectPayload(*reader, reader->record_chunks()[2], e.payloads[2]);
}

TEST_F(SampleFileTest, BadFileHeaderIsAnError) {
  const std::string path = PathOf("good.sample");
  WriteFile(path, 1);
  const Bytes good = ReadFileBytes(path);
  Bytes bad_magic = good;
  bad_magic[0] = std::byte{'X'};
  WriteFileBytes(PathOf("magic"), bad_magic);
  auto reader = SampleFileReader::Open(PathOf("magic"));
  ASSERT_FALSE(reader.has_value());
  EXPECT_TRUE(Contains(reader.error().message, "magic")) << reader.error().message;
  EXPECT_TRUE(Contains(reader.error().message, "offset 0")) << reader.error().message;

  Bytes bad_version = good;
  bad_version[8] = std::byte{99};
  WriteFileBytes(PathOf("version"), bad_version);
  reader = SampleFileReader::Open(PathOf("version"));
  ASSERT_FALSE(reader.has_value());
  EXPECT_TRUE(Contains(reader.error().message, "version")) << reader.error().message;

  EXPECT_FALSE(SampleFileReader::Open(PathOf("does-not-exist")).has_value());
  EXPECT_FALSE(SampleFileReader::Open(dir_).has_value());  // a directory
}

TEST_F(SampleFileTest, WriterCreatesPrivateFileAndNeverOverwrites) {
  const std::string path = PathOf("new.sample");
  // With no umask the mode is exactly what the writer asked for.
  const mode_t old_umask = umask(0);
  auto writer = SampleFileWriter::Create(path, {});
  umask(old_umask);
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  // An existing file is left alone.
  const std::string existing = PathOf("existing");
  WriteFileBytes(existing, Bytes(5, std::byte{7}));
  auto refused = SampleFileWriter::Create(existing, {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_TRUE(Contains(refused.error().message, existing)) << refused.error().message;
  EXPECT_EQ(ReadFileBytes(existing), Bytes(5, std::byte{7}));

  // A symlink is not followed, whether its target exists or not.
  const std::string link = PathOf("link");
  ASSERT_EQ(symlink(existing.c_str(), link.c_str()), 0);
  EXPECT_FALSE(SampleFileWriter::Create(link, {}).has_value());
  EXPECT_EQ(ReadFileBytes(existing), Bytes(5, std::byte{7}));
  const std::string dangling = PathOf("dangling");
  ASSERT_EQ(symlink(PathOf("target").c_str(), dangling.c_str()), 0);
  EXPECT_FALSE(SampleFileWriter::Create(dangling, {}).has_value());
  EXPECT_FALSE(std::filesystem::exists(PathOf("target")));
}

// Decoders on every prefix of a payload: an error naming an offset inside the
// payload, or (at an entry boundary) the complete entries before the cut.
uint64_t TimeField(const Bytes& payload, size_t record_offset, uint32_t time_offset) {
  uint64_t time;
  std::memcpy(&time, payload.data() + record_offset + time_offset, 8);
  return time;
}

TEST(ChunkCodecTest, SampleTimeDeltasTouchOnlySampleTimesAndRoundTrip) {
  const auto attr = st::MakeAttr(kSampleType, true);
  const uint32_t offset = SampleTimeOffset(attr);
  ASSERT_EQ(offset, 32u);  // header, identifier, ip, tid
  Bytes payload;
  std::vector<size_t> samples;  // record offsets
  std::vector<uint64_t> times = {5000, 5010, 4990 /* another CPU, earlier */, 5020, 0};
  const st::SampleIdFields sid{
      .pid = 1, .tid = 1, .time = 4000, .id = 100, .stream_id = 0, .cpu = 0};
  st::Append(payload, st::MakeComm(attr, 1, 1, "app", false, sid));
  for (uint64_t time : times) {
    samples.push_back(payload.size());
    st::SampleFields fields;
    fields.id = 101;
    fields.ip = 0x1000;
    fields.time = time;
    fields.callchain = {0x1000, 0x2000};
    st::Append(payload, st::MakeSample(attr, fields));
    st::Append(payload, st::MakeLost(attr, 100, 1, sid));  // sideband between samples
  }
  const Bytes original = payload;

  EncodeSampleTimeDeltas(payload, offset);
  const std::vector<uint64_t> deltas = {5000, 10, uint64_t(-20), 30, uint64_t(-5020)};
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(TimeField(payload, samples[i], offset), deltas[i]) << i;
  }
  // Everything else is as it was: only the sample time fields differ.
  size_t differing = 0;
  for (size_t i = 0; i < payload.size(); ++i) differing += payload[i] != original[i];
  EXPECT_GT(differing, 0u);
  for (size_t i = 0; i < samples.size(); ++i) {
    std::memcpy(payload.data() + samples[i] + offset, original.data() + samples[i] + offset, 8);
  }
  EXPECT_EQ(payload, original);

  EncodeSampleTimeDeltas(payload, offset);
  DecodeSampleTimeDeltas(payload, offset);
  EXPECT_EQ(payload, original);

  // A malformed record ends the walk; decoding stops there without reading past it.
  Bytes cut = original;
  EncodeSampleTimeDeltas(cut, offset);
  cut.resize(samples[2] + 16);
  DecodeSampleTimeDeltas(cut, offset);
  EXPECT_EQ(TimeField(cut, samples[1], offset), 5010u);
}

TEST(ChunkCodecTest, TruncatedPayloadsAreErrorsNotCrashes) {
  constexpr uint64_t kBase = 5000;
  const std::vector<EventDesc> events = TestEvents();
  const Metadata metadata = {{"key", "value"}, {"k2", std::string("bin\0ary", 7)}};
  Trailer trailer;
  trailer.cpus = {{1, 2, 3, 4, 5}};
  trailer.chunk_offsets = {64, 128, 4096};
  const Bytes ev = EncodeEvents(events), md = EncodeMetadata(metadata), tr = EncodeTrailer(trailer);
  auto events_ok = DecodeEvents(ev, kBase);
  ASSERT_TRUE(events_ok.has_value());
  ASSERT_EQ(events_ok->size(), 3u);
  EXPECT_EQ((*events_ok)[0].name, "cycles:u");
  EXPECT_EQ((*events_ok)[2].ids.size(), 0u);
  EXPECT_EQ(DecodeMetadata(md, kBase).value(), metadata);
  EXPECT_EQ(DecodeTrailer(tr, kBase)->chunk_offsets, trailer.chunk_offsets);

  auto expect_offset_inside = [&](const Error& error, size_t len) {
    const size_t at = error.message.find("offset ");
    ASSERT_NE(at, std::string::npos) << error.message;
    const uint64_t offset = std::stoull(error.message.substr(at + 7));
    EXPECT_GE(offset, kBase) << error.message;
    EXPECT_LE(offset, kBase + len) << error.message;
  };
  for (size_t len = 0; len < ev.size(); ++len) {
    auto r = DecodeEvents(std::span(ev).first(len), kBase);
    if (!r) {
      expect_offset_inside(r.error(), len);
      continue;
    }
    ASSERT_LT(r->size(), events.size());
    EXPECT_EQ(EncodeEvents(*r), Bytes(ev.begin(), ev.begin() + len)) << len;  // a clean prefix
  }
  for (size_t len = 0; len < md.size(); ++len) {
    auto r = DecodeMetadata(std::span(md).first(len), kBase);
    if (!r) {
      expect_offset_inside(r.error(), len);
      continue;
    }
    EXPECT_EQ(EncodeMetadata(*r), Bytes(md.begin(), md.begin() + len)) << len;
  }
  for (size_t len = 0; len < tr.size(); ++len) {
    auto r = DecodeTrailer(std::span(tr).first(len), kBase);
    ASSERT_FALSE(r.has_value()) << len;  // the header's counts say how much must follow
    expect_offset_inside(r.error(), len);
  }
}

TEST(ChunkCodecTest, TruncatedCountsAreErrorsNamingAnOffsetInside) {
  constexpr uint64_t kBase = 7000;
  const Bytes encoded = EncodeCounts(TestCounts());
  auto whole = DecodeCounts(encoded, kBase);
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  ExpectSameCounts(*whole, TestCounts());
  for (size_t len = 0; len < encoded.size(); ++len) {
    auto r = DecodeCounts(std::span(encoded).first(len), kBase);
    ASSERT_FALSE(r.has_value()) << len;  // the header says how many entries follow
    const size_t at = r.error().message.find("offset ");
    ASSERT_NE(at, std::string::npos) << r.error().message;
    const uint64_t offset = std::stoull(r.error().message.substr(at + 7));
    EXPECT_GE(offset, kBase) << r.error().message;
    EXPECT_LE(offset, kBase + len) << r.error().message;
  }
  // An interval count beyond the payload is refused before allocating.
  Bytes lying = encoded;
  const size_t interval_count_at = sizeof(CountsHeader) + 12;
  const uint32_t huge = 0x7fffffff;
  std::memcpy(lying.data() + interval_count_at, &huge, 4);
  auto r = DecodeCounts(lying, kBase);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(Contains(r.error().message, "claim 2147483647 intervals")) << r.error().message;
}

TEST_F(SampleFileTest, TogglesRoundTripAndBadOnesAreSkippedWithAWarning) {
  ToggleEntry on{};
  on.trigger = 1;
  on.target = 0;
  on.action = kToggleOn;
  ToggleEntry off = on;
  off.action = kToggleOff;
  off.scope = kToggleCpu;
  off.target_starts_on = 1;
  const std::string path = PathOf("toggles.sample");
  auto writer = SampleFileWriter::Create(path, WriterOptions{});
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  std::vector<EventDesc> events = TestEvents();
  ASSERT_GE(events.size(), 2u);
  (*writer)->Submit(ChunkType::kEvents, EncodeEvents(events));
  (*writer)->Submit(ChunkType::kToggles, EncodeToggles({on, off}));
  ToggleEntry self = on;
  self.trigger = 0;  // an event switching itself: malformed
  (*writer)->Submit(ChunkType::kToggles, EncodeToggles({self}));
  ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
  writer->reset();
  auto reader = SampleFileReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  ASSERT_EQ(reader->toggles().size(), 2u);
  EXPECT_EQ(reader->toggles()[0].action, kToggleOn);
  EXPECT_EQ(reader->toggles()[1].scope, kToggleCpu);
  EXPECT_EQ(reader->toggles()[1].target_starts_on, 1);
  ASSERT_EQ(reader->warnings().size(), 1u);
  EXPECT_TRUE(Contains(reader->warnings()[0], "toggles (every sample is kept) skipped: toggle at "
                                              "offset"))
      << reader->warnings()[0];

  constexpr uint64_t kBase = 100;
  const Bytes bytes = EncodeToggles({on, off});
  EXPECT_FALSE(DecodeToggles(std::span(bytes).first(20), kBase, 2).has_value());
  EXPECT_FALSE(DecodeToggles(bytes, kBase, 1).has_value());  // names event 1 of 1
  Bytes bad_action = bytes;
  bad_action[8] = std::byte{7};
  auto r = DecodeToggles(bad_action, kBase, 2);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(Contains(r.error().message, "toggle at offset 100 has an unknown action"))
      << r.error().message;
}

TEST(ChunkCodecTest, EventsFromOtherAttrSizesKeepTheCommonPrefix) {
  perf_event_attr attr = st::MakeAttr(PERF_SAMPLE_IP, true);
  attr.config = 0x1234;
  attr.branch_sample_type = 5;  // at offset 72, past PERF_ATTR_SIZE_VER0
  for (uint32_t attr_size : {uint32_t{PERF_ATTR_SIZE_VER0}, uint32_t{sizeof(attr) + 16}}) {
    Bytes payload;
    const EventEntryHeader h{attr_size, 3, 1, 0};
    auto put = [&](const void* p, size_t n) {
      const auto* b = static_cast<const std::byte*>(p);
      payload.insert(payload.end(), b, b + n);
    };
    put(&h, sizeof(h));
    Bytes attr_bytes(attr_size);  // a newer kernel's extra fields are zero here
    std::memcpy(attr_bytes.data(), &attr, std::min<size_t>(attr_size, sizeof(attr)));
    put(attr_bytes.data(), attr_bytes.size());
    put("abc\0\0\0\0\0", 8);
    const uint64_t id = 77;
    put(&id, 8);
    auto events = DecodeEvents(payload, 0);
    ASSERT_TRUE(events.has_value()) << events.error().message;
    ASSERT_EQ(events->size(), 1u);
    EXPECT_EQ((*events)[0].attr.config, 0x1234u);
    EXPECT_EQ((*events)[0].attr.sample_type, PERF_SAMPLE_IP);
    // Fields past VER0 were not in the file: they stay zero.
    EXPECT_EQ((*events)[0].attr.branch_sample_type, attr_size > PERF_ATTR_SIZE_VER0 ? 5u : 0u);
    EXPECT_EQ((*events)[0].name, "abc");
    EXPECT_EQ((*events)[0].ids, std::vector<uint64_t>{77});
  }
}

}  // namespace
}  // namespace sample::format
