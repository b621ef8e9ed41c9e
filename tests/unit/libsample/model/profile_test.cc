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

TEST(ProfileTest, OverloadsAreNamedBySignatureOthersWithoutParameters) {
  Profile profile;
  const uint32_t twice_int =
      profile.InternFunction(1, "twice", false, true, false, {}, "twice(int)");
  const uint32_t twice_double =
      profile.InternFunction(1, "twice", false, true, false, {}, "twice(double)");
  const uint32_t churn = profile.InternFunction(1, "Mixer<long>::churn", false, true, false, {},
                                                "Mixer<long>::churn(long)");
  // Inlined and with a source line, still the same function as the symbol.
  const uint32_t churn_inlined = profile.InternFunction(1, "Mixer<long>::churn", false, true, true,
                                                        "m.cc:3", "Mixer<long>::churn(long)");
  const uint32_t twice_elsewhere =
      profile.InternFunction(2, "twice", false, true, false, {}, "twice(int)");
  const uint32_t c_function = profile.InternFunction(1, "main", false, true);
  EXPECT_NE(twice_int, twice_double);
  EXPECT_EQ(profile.InternFunction(1, "twice", false, true, false, {}, "twice(int)"), twice_int);

  profile.ChooseNames(false);
  EXPECT_EQ(profile.function(twice_int).name, "twice(int)");
  EXPECT_EQ(profile.function(twice_double).name, "twice(double)");
  EXPECT_EQ(profile.function(churn).name, "Mixer<long>::churn");
  EXPECT_EQ(profile.function(churn_inlined).name, "Mixer<long>::churn");
  EXPECT_EQ(profile.function(twice_elsewhere).name, "twice");  // alone in its DSO
  EXPECT_EQ(profile.function(c_function).name, "main");
  EXPECT_EQ(profile.function(churn).signature, "Mixer<long>::churn(long)");
  EXPECT_EQ(profile.function(churn).short_name, "Mixer<long>::churn");
  EXPECT_EQ(profile.function(c_function).signature, "");

  profile.ChooseNames(true);
  EXPECT_EQ(profile.function(churn).name, "Mixer<long>::churn(long)");
  EXPECT_EQ(profile.function(twice_elsewhere).name, "twice(int)");
  EXPECT_EQ(profile.function(c_function).name, "main");
}

TEST(ProfileTest, ACFunctionAndACxxOneOfTheSameNameAreTwoNames) {
  Profile profile;
  const uint32_t c = profile.InternFunction(1, "f", false, true);
  const uint32_t cxx = profile.InternFunction(1, "f", false, true, false, {}, "f(int)");
  profile.ChooseNames(false);
  EXPECT_EQ(profile.function(c).name, "f");
  EXPECT_EQ(profile.function(cxx).name, "f(int)");
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
