// SampleMerger: samples that differ only in time fold into one entry, in
// batches as the loader reads them, however many distinct entries there
// are; an entry without room for a sample's count leaves it a new entry.
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

// Where each sample went, on every path: a new entry, one apart (group
// reads), one folded into an entry of the same batch, one whose count
// does not fit its entry's (a new entry takes over).
TEST(SampleMergerTest, PlacedSaysWhereEachSampleWent) {
  SampleMerger merger;
  std::vector<ProfileSample> samples;
  std::vector<uint32_t> placed;
  uint64_t saturated = 0;
  ProfileSample nearly_full = Make(5, 1, 1, 10);
  nearly_full.samples = UINT32_MAX - 2;
  samples.push_back(nearly_full);
  merger.Merge(samples, saturated, &placed);
  EXPECT_EQ(placed, (std::vector<uint32_t>{0}));
  samples.push_back(Make(1, 1, 2, 10));  // new: entry 1
  ProfileSample read = Make(1, 1, 3, 10);
  read.reads_count = 1;  // apart: entry 2
  samples.push_back(read);
  samples.push_back(Make(1, 1, 4, 10));  // into entry 1
  ProfileSample three = Make(5, 1, 5, 30);
  three.samples = 3;  // does not fit entry 0: entry 3
  samples.push_back(three);
  samples.push_back(Make(5, 1, 6, 10));  // into entry 3
  merger.Merge(samples, saturated, &placed);
  EXPECT_EQ(placed, (std::vector<uint32_t>{1, 2, 1, 3, 3}));
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].samples, UINT32_MAX - 2);
  EXPECT_EQ(samples[1].samples, 2u);
  EXPECT_EQ(samples[2].reads_count, 1u);
  EXPECT_EQ(samples[3].samples, 4u);
  EXPECT_EQ(samples[3].period, 40u);
}

// The memo's indexes follow the merger: a sample folded into an entry
// points at the entry, a new entry where it landed, and every other stays.
TEST(LeafMemoTest, IndexesFollowTheMerge) {
  SampleMerger merger;
  LeafMemo memo;
  std::vector<ProfileSample> samples;
  std::vector<uint32_t> placed;
  uint64_t saturated = 0;
  const auto key = [](uint64_t ip) { return LeafMemo::Key{ip, 1, 1, 0, 0, 3, 4}; };
  // A sample of thread `tid` remembered by `ip` where it was put.
  const auto add = [&](uint32_t tid, uint64_t time, uint64_t ip) {
    samples.push_back(Make(tid, 1, time, 10));
    memo.Remember(key(ip), static_cast<uint32_t>(samples.size() - 1));
  };
  add(1, 1, 0x10);
  add(2, 2, 0x20);
  merger.Merge(samples, saturated, &placed);
  EXPECT_EQ(placed, (std::vector<uint32_t>{0, 1}));
  memo.Remap(0, placed);
  // The next batch: one like the first entry (remembered anew, as after
  // its slot went to another key), one new.
  const size_t from = merger.merged();
  add(1, 3, 0x10);
  add(3, 4, 0x30);
  merger.Merge(samples, saturated, &placed);
  EXPECT_EQ(placed, (std::vector<uint32_t>{0, 2}));
  memo.Remap(from, placed);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(memo.Find(key(0x10)), 0u);
  EXPECT_EQ(memo.Find(key(0x20)), 1u);
  EXPECT_EQ(memo.Find(key(0x30)), 2u);
  EXPECT_EQ(samples[2].tid, 3u);
  // Any other version is another key.
  LeafMemo::Key later = key(0x10);
  ++later.mappings_version;
  EXPECT_EQ(memo.Find(later), std::nullopt);
  later = key(0x10);
  ++later.comms_version;
  EXPECT_EQ(memo.Find(later), std::nullopt);
}

}  // namespace
}  // namespace sample::report
