// PendingChunk: what the draining thread accumulates between hand-overs to
// the writer, and that a refused hand-over loses nothing.
#include "record/drain/pending_chunk.h"

#include <gtest/gtest.h>

namespace sample::record {
namespace {

void Append(PendingChunk& chunk, size_t bytes, uint32_t cpu, std::byte fill) {
  std::vector<std::byte>& buffer = chunk.buffer();
  const size_t before = buffer.size();
  buffer.insert(buffer.end(), bytes, fill);
  chunk.Appended(before, cpu);
}

TEST(PendingChunkTest, RunsOfOneCpuMergeAndNothingAppendedAddsNoRun) {
  PendingChunk chunk(64, CpuFieldPlace{}, 16);
  Append(chunk, 8, 1, std::byte{1});
  Append(chunk, 8, 1, std::byte{2});  // same CPU: the run grows
  Append(chunk, 0, 0, std::byte{3});  // nothing drained from CPU 0
  Append(chunk, 16, 3, std::byte{4});
  chunk.CountRecord(200);
  chunk.CountRecord(0);  // a record without a time leaves the range alone
  chunk.CountRecord(100);
  EXPECT_EQ(chunk.records(), 3u);
  ASSERT_TRUE(chunk.time_range());
  EXPECT_EQ(chunk.time_range()->first, 100u);
  EXPECT_EQ(chunk.time_range()->second, 200u);

  const format::RecordsChunk taken = chunk.Take();
  EXPECT_EQ(taken.records.size(), 32u);
  EXPECT_EQ(taken.record_count, 3u);
  EXPECT_EQ(taken.time_min, 100u);
  EXPECT_EQ(taken.time_max, 200u);
  EXPECT_EQ(taken.sample_time_offset, 16u);
  EXPECT_TRUE(taken.cpu_field);
  ASSERT_EQ(taken.cpu_runs.size(), 2u);
  EXPECT_EQ(taken.cpu_runs[0].end, 16u);
  EXPECT_EQ(taken.cpu_runs[0].cpu, 1u);
  EXPECT_EQ(taken.cpu_runs[1].end, 32u);
  EXPECT_EQ(taken.cpu_runs[1].cpu, 3u);
  EXPECT_TRUE(chunk.empty());
}

// The writer was busy: the chunk goes back and keeps growing, runs and
// counts included, until the next hand-over.
TEST(PendingChunkTest, RestoredChunkKeepsGrowing) {
  PendingChunk chunk(64, std::nullopt, 0);
  Append(chunk, 8, 2, std::byte{1});
  chunk.CountRecord(50);
  chunk.Restore(chunk.Take());
  Append(chunk, 8, 2, std::byte{2});
  Append(chunk, 8, 0, std::byte{3});
  chunk.CountRecord(60);
  const format::RecordsChunk taken = chunk.Take();
  EXPECT_EQ(taken.records.size(), 24u);
  EXPECT_EQ(taken.records[0], std::byte{1});
  EXPECT_EQ(taken.records[8], std::byte{2});
  EXPECT_EQ(taken.record_count, 2u);
  EXPECT_FALSE(taken.cpu_field);
  ASSERT_EQ(taken.cpu_runs.size(), 2u);
  EXPECT_EQ(taken.cpu_runs[0].end, 16u);
  EXPECT_EQ(taken.cpu_runs[1].end, 24u);
}

TEST(PendingChunkTest, ResetStartsAfreshInTheSpareBuffer) {
  PendingChunk chunk(4096, std::nullopt, 0);
  Append(chunk, 8, 0, std::byte{1});
  chunk.CountRecord(5);
  (void)chunk.Take();
  std::vector<std::byte> spare(100, std::byte{9});
  chunk.Reset(std::move(spare));
  EXPECT_TRUE(chunk.empty());
  EXPECT_EQ(chunk.records(), 0u);
  EXPECT_FALSE(chunk.time_range());
  EXPECT_GE(chunk.buffer().capacity(), 4096u);  // a drain never reallocates
  Append(chunk, 4, 1, std::byte{2});
  const format::RecordsChunk taken = chunk.Take();
  ASSERT_EQ(taken.cpu_runs.size(), 1u);
  EXPECT_EQ(taken.cpu_runs[0].end, 4u);
  EXPECT_EQ(taken.time_min, 0u);
}

}  // namespace
}  // namespace sample::record
