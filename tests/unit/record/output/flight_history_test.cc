// FlightHistory: chunks older than its span are dropped whole, their
// sideband kept; the byte cap drops the oldest too and says so; a
// history's counts are its own.
#include "record/output/flight_history.h"

#include <gtest/gtest.h>

#include "libsample/perf/record_walker.h"
#include "tests/unit/synthetic_records.h"

namespace sample::record {
namespace {

using testing::Append;
using testing::Bytes;

constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

// A chunk of CPU `cpu` with a COMM and an MMAP2 (when `sideband`) and
// `samples` samples, at times from `time` up by 1 ns.
format::RecordsChunk Chunk(const perf_event_attr& attr, uint64_t time, int samples, bool sideband,
                           uint32_t cpu = 0) {
  format::RecordsChunk chunk;
  Bytes& bytes = chunk.records;
  testing::SampleIdFields id{.pid = 7, .tid = 7, .time = time};
  if (sideband) {
    Append(bytes, testing::MakeComm(attr, 7, 7, "worker", true, id));
    Append(bytes,
           testing::MakeMmap2(attr, testing::MakeMmap2Fields("/bin/w", 7, 7, 0x1000, 0x1000), id));
    chunk.record_count += 2;
  }
  for (int i = 0; i < samples; ++i) {
    testing::SampleFields fields;
    fields.pid = fields.tid = 7;
    fields.ip = 0x1100;
    fields.time = time + i;
    Append(bytes, testing::MakeSample(attr, fields));
    ++chunk.record_count;
  }
  chunk.time_min = time;
  chunk.time_max = time + (samples > 0 ? samples - 1 : 0);
  chunk.cpu_runs.push_back({bytes.size(), cpu});
  return chunk;
}

std::vector<uint32_t> Types(std::span<const std::byte> bytes) {
  std::vector<uint32_t> types;
  ForEachRecord(bytes, [&](const perf_event_header& h, std::span<const std::byte>) {
    types.push_back(h.type);
  });
  return types;
}

TEST(FlightHistoryTest, OldChunksGoTheirSidebandStays) {
  const perf_event_attr attr = testing::MakeAttr(kSampleType, /*sample_id_all=*/true);
  FlightHistory history(/*span_ns=*/1000, /*byte_cap=*/1 << 20, attr, std::nullopt);
  history.Add(Chunk(attr, 100, 3, /*sideband=*/true));
  history.Add(Chunk(attr, 900, 3, false));
  EXPECT_EQ(history.chunks().size(), 2u);  // 102 + 1000 >= 902: still inside
  EXPECT_TRUE(history.sideband().records.empty());
  history.Add(Chunk(attr, 1500, 2, false, /*cpu=*/1));
  // 102 + 1000 < 1501: the first chunk is gone, its COMM and MMAP2 kept.
  ASSERT_EQ(history.chunks().size(), 2u);
  EXPECT_EQ(history.chunks().front().time_min, 900u);
  EXPECT_EQ(Types(history.sideband().records),
            (std::vector<uint32_t>{PERF_RECORD_COMM, PERF_RECORD_MMAP2}));
  EXPECT_EQ(history.sideband().record_count, 2u);
  ASSERT_EQ(history.sideband().cpu_runs.size(), 1u);
  EXPECT_EQ(history.sideband().cpu_runs[0].end, history.sideband().records.size());
  EXPECT_EQ(history.sideband().time_min, 100u);
  EXPECT_EQ(history.capped_chunks(), 0u);

  const std::vector<CpuCounters> counts = history.Count({0, 1});
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].samples, 3u);  // the history's, not the 3 dropped
  EXPECT_EQ(counts[1].samples, 2u);
}

TEST(FlightHistoryTest, TheByteCapDropsTheOldestAndCountsIt) {
  const perf_event_attr attr = testing::MakeAttr(kSampleType, true);
  const format::RecordsChunk one = Chunk(attr, 100, 10, false);
  FlightHistory history(/*span_ns=*/1'000'000, /*byte_cap=*/one.records.size() * 2, attr,
                      std::nullopt);
  history.Add(Chunk(attr, 100, 10, true));  // bigger than `one`: with the next, above the cap
  history.Add(Chunk(attr, 200, 10, false));
  history.Add(Chunk(attr, 300, 10, false));  // two of `one`'s size: at the cap, kept
  EXPECT_EQ(history.chunk_bytes(), one.records.size() * 2);
  EXPECT_EQ(history.capped_chunks(), 1u);
  ASSERT_EQ(history.chunks().size(), 2u);
  EXPECT_EQ(history.chunks().front().time_min, 200u);
  history.Add(Chunk(attr, 400, 10, false));
  EXPECT_EQ(history.capped_chunks(), 2u);
  EXPECT_EQ(history.chunks().front().time_min, 300u);
  EXPECT_EQ(history.sideband().record_count, 2u);
  // The newest chunk stays even above the cap.
  FlightHistory tiny(1'000'000, 1, attr, std::nullopt);
  tiny.Add(Chunk(attr, 100, 10, false));
  EXPECT_EQ(tiny.chunks().size(), 1u);
}

TEST(FlightHistoryTest, ProcSnapshotIsKeptWhole) {
  const perf_event_attr attr = testing::MakeAttr(kSampleType, true);
  FlightHistory history(1000, 1 << 20, attr, std::nullopt);
  history.AddSideband(Chunk(attr, 50, 2, true, 3));  // samples in it are not sideband
  EXPECT_EQ(history.sideband().record_count, 2u);
  EXPECT_TRUE(history.chunks().empty());
  EXPECT_EQ(FlightByteCap(1), 64ull << 20);
  EXPECT_EQ(FlightByteCap(30), 30ull * (32 << 20));
}

// -d's data mappings: an mmap-munmap loop maps at the same place again
// and again; once they are many, only the newest at each (pid, start) is
// kept, code mappings and other records untouched.
TEST(FlightHistoryTest, DataMappingsAtOnePlaceKeepTheNewest) {
  const perf_event_attr attr = testing::MakeAttr(kSampleType, true);
  FlightHistory history(1000, 1 << 20, attr, std::nullopt);
  history.AddSideband(Chunk(attr, 1, 0, true));  // a COMM and a code MMAP2
  for (int round = 0; round < 3; ++round) {
    format::RecordsChunk chunk;
    for (int i = 0; i < 3000; ++i) {
      testing::Mmap2Fields data =
          testing::MakeMmap2Fields("//anon", 7, 7, 0x7000000 + 0x1000 * (i % 10), 0x1000);
      data.prot = 0x3;  // read, write
      Append(chunk.records, testing::MakeMmap2(attr, data, {.pid = 7, .tid = 7, .time = 10}));
      ++chunk.record_count;
    }
    chunk.cpu_runs.push_back({chunk.records.size(), 1});
    history.AddSideband(chunk);
  }
  const format::RecordsChunk& kept = history.sideband();
  // 9000 kept without compaction; compacted at 4096, the rest after.
  EXPECT_LE(kept.record_count, 4096u + 2u);
  EXPECT_EQ(Types(kept.records).size(), kept.record_count);
  size_t code = 0, data = 0;
  ForEachRecord(kept.records, [&](const perf_event_header& h, std::span<const std::byte> r) {
    if (h.type != PERF_RECORD_MMAP2) return;
    (ParseMmap2(r, attr)->prot & 0x4 ? code : data) += 1;
  });
  EXPECT_EQ(code, 1u);
  EXPECT_GE(data, 10u);  // every place still mapped
  EXPECT_LE(data, 4096u);
  ASSERT_FALSE(kept.cpu_runs.empty());
  EXPECT_EQ(kept.cpu_runs.back().end, kept.records.size());
}

}  // namespace
}  // namespace sample::record
