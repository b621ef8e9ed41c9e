// Tests for OrderedRecordStream: the order must equal a stable sort of the
// whole file by time, whatever the number of threads, with overlapping
// chunk time ranges, records without times and a corrupt chunk.
#include "report/load/ordered_records.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "tests/unit/synthetic_records.h"
#include "tests/unit/temp_dir.h"

namespace sample::report {
namespace {

namespace st = sample::testing;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

// What identifies a record in these tests: its time and its ip (unique).
struct Seen {
  uint64_t time;
  uint64_t ip;
  bool operator==(const Seen&) const = default;
};

class OrderedRecordsTest : public ::testing::Test {
 protected:
  OrderedRecordsTest() : dir_("ordered_records_test"), attr_(st::MakeAttr(kSampleType, true)) {}

  // Writes chunks of samples; each chunk holds two "CPUs" whose records are
  // each in order, interleaved in blocks as a drain of two rings would be.
  // Consecutive chunks overlap in time. Returns all records in file order.
  // `claimed_count`, if not 0, is the record count every chunk header states.
  std::vector<Seen> WriteFile(const std::string& path, int chunks, bool corrupt_third,
                              uint64_t claimed_count = 0) {
    format::WriterOptions options;
    auto writer = format::SampleFileWriter::Create(path, options);
    // A writer that failed to open cannot be used (a file already there
    // is refused): the test fails here, not in a call on the error.
    if (!writer) {
      ADD_FAILURE() << writer.error().message;
      return {};
    }
    EventDesc event;
    event.attr = attr_;
    event.name = "cpu-clock";
    event.ids = {7};
    (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents({event}));
    std::mt19937 random(42);
    std::vector<Seen> all;
    uint64_t ip = 0x1000;
    for (int c = 0; c < chunks; ++c) {
      st::Bytes payload;
      uint64_t count = 0, tmin = UINT64_MAX, tmax = 0;
      for (int cpu = 0; cpu < 2; ++cpu) {
        // Each CPU's block starts a bit before the previous chunk ended.
        uint64_t t = 1000 + uint64_t(c) * 1000 - (cpu == 0 ? 150 : 0);
        for (int i = 0; i < 40; ++i) {
          t += random() % 3 == 0 ? 0 : random() % 40;  // equal times happen
          // Every tenth record of the first chunk has no time.
          const uint64_t time = (c == 0 && i % 10 == 5) ? 0 : t;
          st::SampleFields f;
          f.id = 7;
          f.ip = ip;
          f.pid = 1;
          f.tid = 1;
          f.time = time;
          f.cpu = uint32_t(cpu);
          f.period = 1;
          const st::Bytes record = st::MakeSample(attr_, f);
          payload.insert(payload.end(), record.begin(), record.end());
          all.push_back({time, ip++});
          ++count;
          if (time != 0) {
            tmin = std::min(tmin, time);
            tmax = std::max(tmax, time);
          }
        }
      }
      format::RecordsChunk chunk;
      chunk.records = payload;
      chunk.record_count = claimed_count != 0 ? claimed_count : count;
      chunk.time_min = tmin;
      chunk.time_max = tmax;
      (*writer)->SubmitRecords(std::move(chunk));
    }
    format::Trailer trailer;
    EXPECT_TRUE((*writer)->Finish(trailer));
    if (corrupt_third) {
      auto reader = format::SampleFileReader::Open(path);
      const auto& ref = reader->record_chunks()[2];
      std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(static_cast<std::streamoff>(ref.offset + sizeof(format::ChunkHeader) + 3));
      file.put('\x55');
    }
    return all;
  }

  std::vector<Seen> Stream(const std::string& path, unsigned jobs, RecordStreamStats* stats) {
    auto reader = format::SampleFileReader::Open(path);
    EXPECT_TRUE(reader) << reader.error().message;
    std::vector<Seen> out;
    OrderedRecordStream stream(*reader, jobs);
    for (auto batch = stream.NextBatch(); !batch.empty(); batch = stream.NextBatch()) {
      for (const TimedRecord& r : batch) {
        uint64_t ip;
        std::memcpy(&ip, r.bytes.data() + sizeof(perf_event_header) + 8, 8);
        EXPECT_EQ(r.event, 0u);
        out.push_back({r.time, ip});
      }
    }
    *stats = stream.stats();
    return out;
  }

  st::TempDir dir_;
  perf_event_attr attr_;
};

TEST_F(OrderedRecordsTest, MatchesAStableSortOfTheWholeFile) {
  const std::string path = (dir_.path() / "ordered.data").string();
  std::vector<Seen> expected = WriteFile(path, 12, false);
  // Records without a time go out when their chunk (the first) is read,
  // ahead of everything else; the rest in stable time order.
  std::stable_partition(expected.begin(), expected.end(),
                        [](const Seen& s) { return s.time == 0; });
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Seen& a, const Seen& b) { return a.time < b.time; });
  for (unsigned jobs : {1u, 2u, 5u}) {
    RecordStreamStats stats;
    EXPECT_EQ(Stream(path, jobs, &stats), expected) << jobs << " jobs";
    EXPECT_EQ(stats.bad_chunks, 0u);
  }
}

TEST_F(OrderedRecordsTest, ACorruptChunkIsSkippedAndCounted) {
  const std::string path = (dir_.path() / "corrupt.data").string();
  std::vector<Seen> all = WriteFile(path, 6, true);
  std::vector<Seen> expected;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i / 80 != 2) expected.push_back(all[i]);  // 80 records per chunk
  }
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Seen& a, const Seen& b) { return a.time < b.time; });
  for (unsigned jobs : {1u, 3u}) {
    RecordStreamStats stats;
    EXPECT_EQ(Stream(path, jobs, &stats), expected) << jobs << " jobs";
    EXPECT_EQ(stats.bad_chunks, 1u);
    ASSERT_EQ(stats.warnings.size(), 1u);
    EXPECT_NE(stats.warnings[0].find("checksum"), std::string::npos) << stats.warnings[0];
  }
}

TEST_F(OrderedRecordsTest, ARecordCountThatThePayloadCannotHoldIsNotBelieved) {
  // Found by the report fuzz target: the header's count sized an allocation
  // (here 2^45 entries), which failed before a record was read.
  const std::string path = (dir_.path() / "count.data").string();
  std::vector<Seen> expected = WriteFile(path, 3, false, uint64_t{1} << 45);
  std::stable_partition(expected.begin(), expected.end(),
                        [](const Seen& s) { return s.time == 0; });
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Seen& a, const Seen& b) { return a.time < b.time; });
  RecordStreamStats stats;
  EXPECT_EQ(Stream(path, 1, &stats), expected);
  EXPECT_EQ(stats.bad_chunks, 0u);
}

}  // namespace
}  // namespace sample::report
