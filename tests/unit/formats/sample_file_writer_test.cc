// SampleFileWriter's hooks for a recorder that looks at its records on the
// writer thread: observe_records sees each kRecords chunk's records as the
// file holds them (CPUs inserted, times not yet deltas, not yet split),
// and WaitUntilWritten waits for every chunk submitted before it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "formats/embedded_codec.h"
#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"
#include "tests/unit/synthetic_records.h"

namespace sample::format {
namespace {

namespace st = sample::testing;
using Bytes = std::vector<std::byte>;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
constexpr uint64_t kRingType = kSampleType & ~uint64_t{PERF_SAMPLE_CPU};

// `count` samples of `cpu` from time `t0`, with or without the CPU field.
Bytes Samples(uint32_t cpu, uint64_t t0, int count, uint64_t sample_type = kSampleType) {
  const auto attr = st::MakeAttr(sample_type, true);
  Bytes out;
  for (int i = 0; i < count; ++i) {
    st::SampleFields s;
    s.id = 7;
    s.ip = 0x401000 + 16 * i;
    s.pid = s.tid = 10;
    s.time = t0 + 1000 * i;
    s.cpu = cpu;
    s.period = 1;
    st::Append(out, st::MakeSample(attr, s));
  }
  return out;
}

std::vector<EventDesc> Events() {
  EventDesc event;
  event.attr = st::MakeAttr(kSampleType, true);
  event.name = "cpu-clock";
  event.ids = {7};
  return {event};
}

class SampleFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "sample_file_writer_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
};

TEST_F(SampleFileWriterTest, TheObserverSeesEveryRecordsChunkAsTheFileHoldsIt) {
  const auto attr = st::MakeAttr(kSampleType, true);
  for (int level : {1, 0}) {
    std::vector<Bytes> observed;  // written by the writer thread, read after Finish
    WriterOptions options{.zstd_level = level, .max_chunk_raw_size = 1024};
    options.observe_records = [&](std::span<const std::byte> records) {
      observed.emplace_back(records.begin(), records.end());
    };
    const std::string path = dir_ + "/observed" + std::to_string(level) + ".sample";
    auto writer = SampleFileWriter::Create(path, options);
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    (*writer)->Submit(ChunkType::kEvents, EncodeEvents(Events()));

    // Two CPUs' runs without the CPU field, over the chunk limit (split
    // when written), sample times written as deltas at level 1.
    RecordsChunk ring;
    ring.records = Samples(3, 1000, 20, kRingType);
    const size_t first_run = ring.records.size();
    st::Append(ring.records, Samples(1, 500000, 20, kRingType));
    ring.record_count = 40;
    ring.sample_time_offset = SampleTimeOffset(attr);
    ring.cpu_field = CpuFieldPlaceOf(attr);
    ring.cpu_runs = {{first_run, 3}, {ring.records.size(), 1}};
    Bytes with_cpus = Samples(3, 1000, 20);
    st::Append(with_cpus, Samples(1, 500000, 20));
    ASSERT_GT(with_cpus.size(), 1024u);
    (*writer)->SubmitRecords(std::move(ring));
    (*writer)->Submit(ChunkType::kMetadata, EncodeMetadata({{"hostname", "box"}}));
    const Bytes plain = Samples(0, 900000, 3);
    (*writer)->Submit(ChunkType::kRecords, plain, 3);
    RecordsChunk tried;
    tried.records = Samples(2, 950000, 2);
    tried.record_count = 2;
    while (!(*writer)->TrySubmitRecords(tried)) {
    }
    ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());

    ASSERT_EQ(observed.size(), 3u);  // the metadata chunk is not records
    EXPECT_EQ(observed[0], with_cpus);
    EXPECT_EQ(observed[1], plain);
    EXPECT_EQ(observed[2], Samples(2, 950000, 2));
    // What the file holds is what was observed.
    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    Bytes read;
    for (const ChunkRef& chunk : reader->record_chunks()) {
      auto payload = reader->ReadPayload(chunk);
      ASSERT_TRUE(payload.has_value()) << payload.error().message;
      read.insert(read.end(), payload->bytes().begin(), payload->bytes().end());
    }
    Bytes all = with_cpus;
    st::Append(all, plain);
    st::Append(all, observed[2]);
    EXPECT_EQ(read, all);
    EXPECT_GT(reader->record_chunks().size(), 3u);  // the first one was split
  }
}

// The recorder's order at close: wait for the drained records to be
// observed, embed what the observer collected, then finish.
TEST_F(SampleFileWriterTest, WaitUntilWrittenWaitsForEveryEarlierChunk) {
  int observed = 0;  // the writer thread's; read only after WaitUntilWritten
  uint64_t highest_ip = 0;
  WriterOptions options;
  options.observe_records = [&](std::span<const std::byte> records) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a slow observer
    ForEachRecord(records, [&](const perf_event_header&, std::span<const std::byte> record) {
      uint64_t ip;  // after the 8-byte header and PERF_SAMPLE_IDENTIFIER
      std::memcpy(&ip, record.data() + 16, sizeof(ip));
      highest_ip = std::max(highest_ip, ip);
    });
    ++observed;
  };
  const std::string path = dir_ + "/wait.sample";
  auto writer = SampleFileWriter::Create(path, options);
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  (*writer)->WaitUntilWritten();  // nothing submitted: returns at once
  (*writer)->Submit(ChunkType::kEvents, EncodeEvents(Events()));
  for (int i = 0; i < 6; ++i) {
    RecordsChunk chunk;
    chunk.records = Samples(0, 1000 * (i + 1), i + 1);
    chunk.record_count = i + 1;
    (*writer)->SubmitRecords(std::move(chunk));
  }
  (*writer)->WaitUntilWritten();
  EXPECT_EQ(observed, 6);
  EXPECT_EQ(highest_ip, 0x401000u + 16 * 5);
  // Every chunk is in the file: a reader sees them before the trailer.
  EXPECT_EQ((*writer)->bytes_written(), std::filesystem::file_size(path));
  {
    auto reader = SampleFileReader::Open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    EXPECT_EQ(reader->record_chunks().size(), 6u);
    EXPECT_FALSE(reader->finalized());
  }
  EmbeddedBinary binary;
  binary.path = "/bin/app";
  binary.functions = {{highest_ip, 16, "last"}};
  (*writer)->Submit(ChunkType::kEmbeddedBinary, EncodeEmbeddedBinary(binary));
  ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
  EXPECT_EQ(observed, 6);
  auto reader = SampleFileReader::Open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  ASSERT_EQ(reader->embedded_binaries().size(), 1u);
  EXPECT_EQ(*reader->embedded_binaries().all()[0], binary);
}

// Chunks submitted from other threads while one waits: it returns once
// those submitted before its call are written, whatever comes after.
TEST_F(SampleFileWriterTest, WaitUntilWrittenFromSeveralThreads) {
  std::atomic<int> observed{0};
  WriterOptions options;
  options.observe_records = [&](std::span<const std::byte>) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    observed.fetch_add(1);
  };
  auto writer = SampleFileWriter::Create(dir_ + "/threads.sample", options);
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  (*writer)->Submit(ChunkType::kEvents, EncodeEvents(Events()));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        (*writer)->Submit(ChunkType::kRecords, Samples(t, 1000 * i, 1), 1);
        const int submitted_by_me = i + 1;
        (*writer)->WaitUntilWritten();
        EXPECT_GE(observed.load(), submitted_by_me);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  (*writer)->WaitUntilWritten();
  EXPECT_EQ(observed.load(), 40);
  ASSERT_TRUE((*writer)->Finish(Trailer{}).has_value());
}

}  // namespace
}  // namespace sample::format
