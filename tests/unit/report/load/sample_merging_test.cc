// SampleMerger: samples that differ only in time fold into one entry, in
// batches as the loader reads them, however many distinct entries there
// are; an entry whose count is full leaves the next ones a new entry.
#include "report/load/sample_merging.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

namespace sample::report {
namespace {

ProfileSample Make(uint32_t tid, uint32_t frames_begin, uint64_t time, uint64_t period) {
  ProfileSample s;
  s.pid = 1;
  s.tid = tid;
  s.frames_begin = frames_begin;
  s.frames_count = 1;
  s.time = time;
  s.period = period;
  return s;
}

TEST(SampleMergerTest, ManyDistinctSamplesFoldAcrossBatches) {
  SampleMerger merger;
  std::vector<ProfileSample> samples;
  uint64_t saturated = 0;
  uint64_t time = 0;
  // 3 rounds of 5000 distinct (tid, stack) pairs, each round its own batch:
  // the table grows past its first size while entries are in it.
  for (int round = 0; round < 3; ++round) {
    for (uint32_t i = 0; i < 5000; ++i) samples.push_back(Make(i % 7, i, ++time, 10 + round));
    merger.Merge(samples, saturated);
  }
  ASSERT_EQ(samples.size(), 5000u);
  std::map<std::tuple<uint32_t, uint32_t>, int> seen;
  for (size_t i = 0; i < samples.size(); ++i) {
    const ProfileSample& s = samples[i];
    EXPECT_EQ(s.samples, 3u);
    EXPECT_EQ(s.period, 33u);
    EXPECT_EQ(s.time, i + 1);  // the first one's
    ++seen[{s.tid, s.frames_begin}];
  }
  EXPECT_EQ(seen.size(), 5000u);
  EXPECT_EQ(merger.last_time(), time);
  EXPECT_EQ(saturated, 0u);
}

TEST(SampleMergerTest, AFullEntryHandsOverAndPeriodsSaturate) {
  SampleMerger merger;
  std::vector<ProfileSample> samples;
  uint64_t saturated = 0;
  ProfileSample full = Make(1, 1, 1, UINT64_MAX - 5);
  full.samples = UINT32_MAX;
  samples.push_back(full);
  samples.push_back(Make(1, 1, 2, 7));  // the first is full: a new entry
  samples.push_back(Make(1, 1, 3, 8));  // into the new one
  samples.push_back(Make(2, 1, 4, UINT64_MAX - 1));
  samples.push_back(Make(2, 1, 5, 9));  // past 2^64: saturated
  ProfileSample read = Make(2, 1, 6, 1);
  read.reads_count = 1;  // with group reads: apart
  samples.push_back(read);
  merger.Merge(samples, saturated);
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].samples, UINT32_MAX);
  EXPECT_EQ(samples[1].samples, 2u);
  EXPECT_EQ(samples[1].period, 15u);
  EXPECT_EQ(samples[2].period, UINT64_MAX);
  EXPECT_EQ(samples[3].reads_count, 1u);
  EXPECT_EQ(saturated, 1u);
}

}  // namespace
}  // namespace sample::report
