// MemoryRecording: record chunks handed over in memory read back as a
// file's would, CPU fields inserted per run as the file writer inserts
// them; SetChunks replaces the chunks; a chunk it does not hold is an error.
#include "formats/memory_recording.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"
#include "tests/unit/synthetic_records.h"

namespace sample::format {
namespace {

namespace st = sample::testing;
using Bytes = std::vector<std::byte>;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
// What the rings hold when the recorder leaves the CPU to the writer.
constexpr uint64_t kRingType = kSampleType & ~uint64_t{PERF_SAMPLE_CPU};

EventDesc Event() {
  EventDesc event;
  event.attr = st::MakeAttr(kSampleType, true);
  event.name = "cpu-clock";
  event.ids = {7};
  return event;
}

MemoryRecording MakeRecording() {
  return MemoryRecording("live test", {Event()}, {{"hostname", "box"}}, "");
}

// `count` samples on `cpu` from time `t0`, laid out for `sample_type`.
Bytes Samples(uint64_t sample_type, uint32_t cpu, uint64_t t0, int count) {
  const perf_event_attr attr = st::MakeAttr(sample_type, true);
  Bytes out;
  for (int i = 0; i < count; ++i) {
    st::SampleFields s;
    s.id = 7;
    s.ip = 0x401000 + 16 * i;
    s.pid = s.tid = 10;
    s.time = t0 + 100 * i;
    s.cpu = cpu;
    s.period = 1000;
    st::Append(out, st::MakeSample(attr, s));
  }
  return out;
}

// A COMM record (a non-sample one: its CPU is in the sample_id trailer).
Bytes Comm(uint64_t sample_type, uint32_t cpu, uint64_t time) {
  return st::MakeComm(st::MakeAttr(sample_type, true), 10, 10, "app", false,
                      st::SampleIdFields{10, 10, time, 7, 0, cpu});
}

RecordsChunk Chunk(Bytes records, uint64_t count, uint64_t time_min, uint64_t time_max) {
  RecordsChunk chunk;
  chunk.records = std::move(records);
  chunk.record_count = count;
  chunk.time_min = time_min;
  chunk.time_max = time_max;
  return chunk;
}

Bytes Read(const MemoryRecording& recording, const ChunkRef& ref) {
  Payload payload;
  const auto read = recording.ReadPayloadInto(ref, payload);
  EXPECT_TRUE(read) << read.error().message;
  return Bytes(payload.bytes().begin(), payload.bytes().end());
}

TEST(MemoryRecordingTest, AChunkWithoutCpuFieldReadsBackAsGiven) {
  MemoryRecording recording = MakeRecording();
  EXPECT_TRUE(recording.record_chunks().empty());
  EXPECT_EQ(recording.format_name(), "live");
  EXPECT_TRUE(recording.finalized());
  EXPECT_EQ(recording.events().events().size(), 1u);
  Bytes records = Samples(kSampleType, 2, 1000, 3);
  st::Append(records, Comm(kSampleType, 2, 1500));
  const Bytes given = records;
  std::vector<RecordsChunk> chunks;
  chunks.push_back(Chunk(std::move(records), 4, 1000, 1500));
  recording.SetChunks(std::move(chunks));
  ASSERT_EQ(recording.record_chunks().size(), 1u);
  const ChunkRef& ref = recording.record_chunks()[0];
  EXPECT_EQ(ref.header.type, static_cast<uint16_t>(ChunkType::kRecords));
  EXPECT_EQ(ref.header.raw_size, given.size());
  EXPECT_EQ(Read(recording, ref), given);
}

// Two runs of the ring's records without the CPU field (CPU 3, then CPU
// 5), samples and a COMM among them: read back, every record is what the
// kernel would have written with PERF_SAMPLE_CPU, with its run's CPU.
TEST(MemoryRecordingTest, CpuFieldsAreInsertedPerRun) {
  MemoryRecording recording = MakeRecording();
  RecordsChunk chunk;
  chunk.records = Samples(kRingType, 0, 1000, 2);
  st::Append(chunk.records, Comm(kRingType, 0, 1200));
  const size_t first_run = chunk.records.size();
  st::Append(chunk.records, Samples(kRingType, 0, 2000, 3));
  chunk.record_count = 6;
  chunk.time_min = 1000;
  chunk.time_max = 2200;
  chunk.cpu_field = CpuFieldPlaceOf(Event().attr);
  chunk.cpu_runs = {{first_run, 3}, {chunk.records.size(), 5}};
  std::vector<RecordsChunk> chunks;
  chunks.push_back(std::move(chunk));
  recording.SetChunks(std::move(chunks));
  ASSERT_EQ(recording.record_chunks().size(), 1u);
  const Bytes read = Read(recording, recording.record_chunks()[0]);

  Bytes expected = Samples(kSampleType, 3, 1000, 2);
  st::Append(expected, Comm(kSampleType, 3, 1200));
  st::Append(expected, Samples(kSampleType, 5, 2000, 3));
  EXPECT_EQ(read, expected);
  EXPECT_EQ(recording.record_chunks()[0].header.raw_size, expected.size());

  const perf_event_attr attr = Event().attr;
  std::vector<uint32_t> cpus;
  std::vector<uint64_t> times;
  const size_t walked =
      ForEachRecord(read, [&](const perf_event_header& header, std::span<const std::byte> r) {
        if (header.type == PERF_RECORD_SAMPLE) {
          const auto sample = ParseSample(r, attr);
          ASSERT_TRUE(sample);
          cpus.push_back(sample->cpu);
          times.push_back(sample->time);
        } else {
          const auto id = ParseSampleIdTrailer(r, attr);
          ASSERT_TRUE(id);
          cpus.push_back(id->cpu);
          times.push_back(id->time);
        }
      });
  EXPECT_EQ(walked, read.size());
  EXPECT_EQ(cpus, (std::vector<uint32_t>{3, 3, 3, 5, 5, 5}));
  EXPECT_EQ(times, (std::vector<uint64_t>{1000, 1100, 1200, 2000, 2100, 2200}));
}

TEST(MemoryRecordingTest, SetChunksReplacesThePreviousChunks) {
  MemoryRecording recording = MakeRecording();
  std::vector<RecordsChunk> first;
  first.push_back(Chunk(Samples(kSampleType, 0, 1000, 2), 2, 1000, 1100));
  first.push_back(Chunk(Samples(kSampleType, 1, 1200, 4), 4, 1200, 1500));
  first.push_back(Chunk({}, 0, 0, 0));  // nothing drained: no chunk
  recording.SetChunks(std::move(first));
  ASSERT_EQ(recording.record_chunks().size(), 2u);
  EXPECT_EQ(recording.record_chunks()[1].header.record_count, 4u);
  const ChunkRef old_second = recording.record_chunks()[1];

  const Bytes next = Samples(kSampleType, 2, 5000, 3);
  std::vector<RecordsChunk> second;
  second.push_back(Chunk(next, 3, 5000, 5200));
  recording.SetChunks(std::move(second));
  ASSERT_EQ(recording.record_chunks().size(), 1u);
  const ChunkHeader& header = recording.record_chunks()[0].header;
  EXPECT_EQ(header.record_count, 3u);
  EXPECT_EQ(header.time_min, 5000u);
  EXPECT_EQ(header.time_max, 5200u);
  EXPECT_EQ(header.raw_size, next.size());
  EXPECT_EQ(header.stored_size, next.size());
  EXPECT_EQ(Read(recording, recording.record_chunks()[0]), next);
  // The chunk the earlier call had second is gone.
  Payload payload;
  EXPECT_FALSE(recording.ReadPayloadInto(old_second, payload));

  recording.SetChunks({});
  EXPECT_TRUE(recording.record_chunks().empty());
}

TEST(MemoryRecordingTest, AChunkItDoesNotHoldIsAnError) {
  MemoryRecording recording = MakeRecording();
  Payload payload;
  ChunkRef ref;
  ref.offset = 0;
  auto read = recording.ReadPayloadInto(ref, payload);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("live test"), std::string::npos) << read.error().message;

  std::vector<RecordsChunk> chunks;
  chunks.push_back(Chunk(Samples(kSampleType, 0, 1000, 1), 1, 1000, 1000));
  recording.SetChunks(std::move(chunks));
  for (uint64_t offset : {uint64_t{1}, uint64_t{12345}, UINT64_MAX}) {
    ref.offset = offset;
    EXPECT_FALSE(recording.ReadPayloadInto(ref, payload)) << offset;
  }
  ref.offset = 0;
  EXPECT_TRUE(recording.ReadPayloadInto(ref, payload));
}

}  // namespace
}  // namespace sample::format
