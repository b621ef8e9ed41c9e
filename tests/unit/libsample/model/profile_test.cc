#include "libsample/model/profile.h"

#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sample {
namespace {

using ::testing::ElementsAre;

TEST(ProfileTest, InterningGivesOneIdPerDistinctValue) {
  Profile profile;
  const uint32_t prog = profile.InternComm("prog");
  EXPECT_EQ(profile.InternComm("prog"), prog);
  const uint32_t other = profile.InternComm("other");
  EXPECT_NE(other, prog);
  EXPECT_EQ(profile.comm(other), "other");

  const uint32_t f = profile.InternFunction(2, "f", false, true);
  EXPECT_EQ(profile.InternFunction(2, "f", false, true), f);
  EXPECT_NE(profile.InternFunction(3, "f", false, true), f);  // another DSO
  const uint32_t inlined = profile.InternFunction(2, "f", false, true, true);
  EXPECT_NE(inlined, f);
  EXPECT_EQ(FunctionLabel(profile.function(f)), "f");
  EXPECT_EQ(FunctionLabel(profile.function(inlined)), "f (inlined)");
  EXPECT_EQ(profile.function(f).dso, 2u);
  EXPECT_EQ(profile.function(f).symbol, f);
  EXPECT_EQ(profile.function(f).srcline, 0u);
  EXPECT_FALSE(profile.has_srclines());
}

TEST(ProfileTest, SourceLinesShareTheSymbolOfTheirFunction) {
  Profile profile;
  const uint32_t line1 = profile.InternFunction(2, "f", false, true, false, "f.c:1");
  const uint32_t line2 = profile.InternFunction(2, "f", false, true, false, "f.c:2");
  const uint32_t g = profile.InternFunction(2, "g", false, true, false, "f.c:1");
  EXPECT_NE(line1, line2);
  EXPECT_EQ(profile.InternFunction(2, "f", false, true, false, "f.c:2"), line2);
  const uint32_t f = profile.InternFunction(2, "f", false, true);
  EXPECT_EQ(profile.function(line1).symbol, f);
  EXPECT_EQ(profile.function(line2).symbol, f);
  EXPECT_NE(profile.function(g).symbol, f);
  EXPECT_TRUE(profile.has_srclines());
  EXPECT_EQ(profile.srcline(profile.function(line2).srcline), "f.c:2");
  EXPECT_EQ(profile.function(g).srcline, profile.function(line1).srcline);  // one id per line
  EXPECT_EQ(profile.srcline(0), "??:0");
}

TEST(ProfileTest, EachDistinctStackIsStoredOnce) {
  Profile profile;
  const uint32_t main = profile.InternFunction(2, "main", false, true);
  const uint32_t a = profile.InternFunction(2, "a", false, true);
  const std::vector<uint32_t> stack = {a, main};
  const std::vector<FrameAddress> at = {{0x1010, 0x10}, {0x2020, 0x20}};
  profile.AddSample(ProfileSample{}, stack, at);
  profile.AddSample(ProfileSample{}, stack, at);
  profile.AddSample(ProfileSample{}, stack);  // other addresses: another stack
  const std::vector<ProfileSample>& samples = profile.samples();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].frames_begin, samples[1].frames_begin);
  EXPECT_NE(samples[2].frames_begin, samples[0].frames_begin);
  EXPECT_THAT(profile.frames(samples[1]), ElementsAre(a, main));
  EXPECT_EQ(profile.addresses(samples[1])[1].ip, 0x2020u);
  EXPECT_EQ(profile.addresses(samples[1])[1].symbol_offset, 0x20u);
  EXPECT_EQ(profile.addresses(samples[2])[0].ip, 0u);
  EXPECT_THAT(profile.frames(samples[2]), ElementsAre(a, main));
}

TEST(ProfileTest, BulkLoadedSamplesKeepTheirReadsAndTotals) {
  Profile profile;
  profile.set_event_names({"cpu-clock", "task-clock", "page-faults"});
  profile.set_group_members(0, {1, 2});
  const uint32_t main = profile.InternFunction(2, "main", false, true);
  ProfileSample first;
  first.time = 300;
  first.period = 5;
  profile.AddSample(first, std::vector<uint32_t>{main}, {}, std::vector<MemberCount>{{1, 7}});

  const Profile::StackRef ref = profile.InternStack(std::vector<uint32_t>{main}, {});
  ProfileSample bulk;
  bulk.time = 100;
  bulk.period = 10;
  bulk.frames_begin = ref.begin;
  bulk.frames_count = ref.count;
  bulk.reads_begin = 0;  // ranges of the reads handed over with the samples
  bulk.reads_count = 2;
  ProfileSample other_event = bulk;
  other_event.event = 2;
  other_event.time = 200;
  other_event.reads_begin = 2;
  other_event.reads_count = 0;
  profile.AddSamples({bulk, other_event}, {{1, 11}, {2, 3}});

  const std::vector<ProfileSample>& samples = profile.samples();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[1].frames_begin, samples[0].frames_begin);
  const auto reads = profile.reads(samples[1]);
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0].event, 1u);
  EXPECT_EQ(reads[0].count, 11u);
  EXPECT_EQ(reads[1].count, 3u);
  EXPECT_EQ(profile.reads(samples[0])[0].count, 7u);
  EXPECT_TRUE(profile.reads(samples[2]).empty());

  EXPECT_EQ(profile.total_period(0), 15u);
  EXPECT_EQ(profile.sample_count(0), 2u);
  EXPECT_EQ(profile.sample_count(1), 0u);
  EXPECT_EQ(profile.sample_count(2), 1u);
  EXPECT_EQ(profile.total_period(9), 0u);  // no such event
  EXPECT_EQ(profile.event_count(), 3u);
  EXPECT_EQ(profile.first_time(), 100u);
  EXPECT_EQ(profile.last_time(), 300u);
  EXPECT_THAT(profile.group_members(0), ElementsAre(1u, 2u));
  EXPECT_TRUE(profile.group_members(2).empty());
}

}  // namespace
}  // namespace sample
