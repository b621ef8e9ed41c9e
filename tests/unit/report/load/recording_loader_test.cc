// LoadRecording over small synthetic files: sideband applied in time order,
// samples resolved against the mappings of their moment, lost and
// malformed records counted once each.
#include "report/load/recording_loader.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "formats/sample_file_writer.h"
#include "tests/unit/synthetic_records.h"
#include "tests/unit/temp_dir.h"

namespace sample::report {
namespace {

namespace st = sample::testing;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

class RecordingLoaderTest : public ::testing::Test {
 protected:
  RecordingLoaderTest() : dir_("recording_loader_test"), attr_(st::MakeAttr(kSampleType, true)) {}

  st::SampleIdFields Id(uint32_t pid, uint64_t time, uint32_t cpu = 0) {
    return st::SampleIdFields{pid, pid, time, 7, 0, cpu};
  }
  void Sample(uint32_t pid, uint64_t ip, uint64_t time, uint32_t cpu = 0) {
    st::SampleFields f;
    f.id = 7;
    f.ip = ip;
    f.pid = f.tid = pid;
    f.time = time;
    f.cpu = cpu;
    f.period = 1000;
    st::Append(records_, st::MakeSample(attr_, f));
    ++count_;
  }
  void Add(const st::Bytes& record) {
    st::Append(records_, record);
    ++count_;
  }
  // `leaf_only`: as --annotate loads, without chains or unwinding.
  // `chain_leaf`: without chains, each sample at its chain's first address
  // (a flat report's load).
  Recording Load(bool merge_samples = false, bool leaf_only = false, bool chain_leaf = false) {
    const std::string path =
        (dir_.path() / fmt::format("{}{}{}.data", merge_samples ? "merged" : "r",
                                   leaf_only ? "-leaf" : "", chain_leaf ? "-chain" : ""))
            .string();
    auto writer = format::SampleFileWriter::Create(path, {});
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
    format::RecordsChunk chunk;
    chunk.records = records_;
    chunk.record_count = count_;
    chunk.time_min = 1;
    chunk.time_max = 1000;
    (*writer)->SubmitRecords(std::move(chunk));
    EXPECT_TRUE((*writer)->Finish(format::Trailer{}));
    LoadOptions options;
    options.jobs = 1;
    options.merge_samples = merge_samples;
    options.chains = !leaf_only;
    options.chain_leaf = chain_leaf;
    options.unwind = !leaf_only;
    options.binaries.files.use_debuginfod = false;
    auto recording = LoadRecording(path, options);
    EXPECT_TRUE(recording) << recording.error().message;
    return std::move(*recording);
  }
  // The DSO and name of each sample's leaf, in time order.
  std::vector<std::string> Leaves(const Recording& r) {
    std::vector<std::string> out;
    for (const ProfileSample& s : r.profile.samples()) {
      const Function& f = r.profile.function(r.profile.frames(s).front());
      out.push_back(r.profile.dso_name(f.dso) + " " + std::string(r.profile.comm(s.comm)));
    }
    return out;
  }

  st::TempDir dir_;
  perf_event_attr attr_;
  st::Bytes records_;
  uint64_t count_ = 0;
};

TEST_F(RecordingLoaderTest, SamplesResolveAgainstTheMappingsOfTheirMoment) {
  Add(st::MakeComm(attr_, 5, 5, "first", true, Id(5, 10)));
  st::Mmap2Fields m = st::MakeMmap2Fields("/bin/first", 5, 5, 0x400000, 0x1000, 0);
  m.prot = 5;  // PROT_READ | PROT_EXEC
  Add(st::MakeMmap2(attr_, m, Id(5, 11)));
  Sample(5, 0x400010, 20);
  Add(st::MakeComm(attr_, 5, 5, "second", true, Id(5, 30)));  // exec: mappings gone
  Sample(5, 0x400010, 31);
  m.filename = "/bin/second";
  Add(st::MakeMmap2(attr_, m, Id(5, 32)));
  Sample(5, 0x400010, 40);
  const Recording r = Load();
  EXPECT_EQ(Leaves(r), (std::vector<std::string>{"/bin/first first", "[unknown] second",
                                                 "/bin/second second"}));
  EXPECT_EQ(r.stats.samples, 3u);
  EXPECT_EQ(r.stats.malformed_records, 0u);
}

// LOST and LOST_SAMPLES add to the same counts; a malformed one of either
// is counted once, as malformed, and loading goes on.
TEST_F(RecordingLoaderTest, LostCountedPerCpuAndMalformedRecordsOnce) {
  Add(st::MakeLost(attr_, 7, 40, Id(1, 5, 1)));
  Add(st::MakeLostSamples(attr_, 2, Id(1, 6, 0)));
  st::Bytes torn = st::MakeLost(attr_, 7, 9, Id(1, 7, 1));
  torn.resize(sizeof(perf_event_header) + 8);  // no room for the count
  reinterpret_cast<perf_event_header*>(torn.data())->size = static_cast<uint16_t>(torn.size());
  Add(torn);
  st::Bytes torn_samples = st::MakeLostSamples(attr_, 9, Id(1, 8, 1));
  torn_samples.resize(sizeof(perf_event_header));
  reinterpret_cast<perf_event_header*>(torn_samples.data())->size =
      static_cast<uint16_t>(torn_samples.size());
  Add(torn_samples);
  Sample(1, 0x1000, 9, 1);
  const Recording r = Load();
  EXPECT_EQ(r.stats.lost_samples, 42u);
  EXPECT_EQ(r.stats.per_cpu.at(1).lost_samples, 40u);
  EXPECT_EQ(r.stats.per_cpu.at(0).lost_samples, 2u);
  EXPECT_EQ(r.stats.per_cpu.at(1).lost_records, 1u);
  EXPECT_EQ(r.stats.malformed_records, 2u);
  EXPECT_EQ(r.stats.samples, 1u);
  EXPECT_EQ(r.stats.records, 5u);
}

// Damage is said in every view, not only counted in --stats: a warning with
// the count, and when no sample at all could be read, that instead of an
// empty profile that looks complete.
TEST_F(RecordingLoaderTest, MalformedSamplesAreWarnedOfAndAllMalformedIsSaid) {
  for (int i = 0; i < 3; ++i) {
    st::SampleFields f;
    f.id = 7;
    f.pid = f.tid = 1;
    f.time = 10 + i;
    st::Bytes torn = st::MakeSample(attr_, f);
    torn.resize(sizeof(perf_event_header) + 8);  // the id, and nothing of the rest
    reinterpret_cast<perf_event_header*>(torn.data())->size = static_cast<uint16_t>(torn.size());
    Add(torn);
  }
  const Recording r = Load();
  EXPECT_EQ(r.stats.samples, 0u);
  EXPECT_EQ(r.stats.malformed_samples, 3u);
  std::string warnings;
  for (const std::string& w : r.warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("3 malformed record(s)"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("no sample could be read: every one of the 3 sample records was "
                          "malformed"),
            std::string::npos)
      << warnings;
}

// Periods summing past 2^64 (a crafted file) are cut so that every sum
// fits: shares stay at most 100%, and the cut is said.
class PeriodSumsTest : public RecordingLoaderTest, public ::testing::WithParamInterface<bool> {};

TEST_P(PeriodSumsTest, SaturateInsteadOfWrapping) {
  for (int i = 0; i < 3; ++i) {
    st::SampleFields f;
    f.id = 7;
    f.ip = 0x1000;
    f.pid = f.tid = 1;
    f.time = 10 + i;
    f.period = uint64_t{1} << 63;
    Add(st::MakeSample(attr_, f));
  }
  const Recording r = Load(/*merge_samples=*/GetParam());
  EXPECT_EQ(r.stats.samples, 3u);
  EXPECT_EQ(r.profile.sample_count(0), 3u);
  EXPECT_EQ(r.profile.samples().size(), GetParam() ? 1u : 3u);
  EXPECT_EQ(r.stats.saturated_periods, 2u);
  EXPECT_EQ(r.profile.total_period(0), UINT64_MAX);
  bool said = false;
  for (const std::string& w : r.warnings) said |= w.find("summed past 2^64") != std::string::npos;
  EXPECT_TRUE(said);
}

// Merged, every sample of one entry shares all but its time.
INSTANTIATE_TEST_SUITE_P(Merged, PeriodSumsTest, ::testing::Bool());

// Merging keeps one entry per sample that differs from the others in more
// than its time: the counts and periods of every thread, CPU and stack
// are those of the unmerged samples, and the time range is the samples'.
TEST_F(RecordingLoaderTest, SamplesDifferingOnlyInTimeAreMerged) {
  Add(st::MakeComm(attr_, 5, 5, "first", true, Id(5, 10)));
  st::Mmap2Fields m = st::MakeMmap2Fields("/bin/first", 5, 5, 0x400000, 0x1000, 0);
  m.prot = 5;  // PROT_READ | PROT_EXEC
  Add(st::MakeMmap2(attr_, m, Id(5, 11)));
  Sample(5, 0x400010, 20);
  Sample(5, 0x400010, 21);
  Sample(5, 0x400010, 22, /*cpu=*/1);
  Sample(5, 0x400020, 23);
  Sample(6, 0x400010, 24);  // another process: no mapping there
  Sample(5, 0x400010, 25);
  Add(st::MakeComm(attr_, 5, 5, "renamed", false, Id(5, 30)));
  Sample(5, 0x400010, 31);
  Sample(5, 0x400010, 35);  // the latest, merged into the entry of 31
  // (comm, cpu, leaf address, pid) -> (samples, period) over the entries.
  using Key = std::tuple<std::string, uint32_t, uint64_t, uint32_t>;
  auto sums = [](const Recording& r) {
    std::map<Key, std::pair<uint64_t, uint64_t>> out;
    for (const ProfileSample& s : r.profile.samples()) {
      auto& [samples, period] =
          out[{r.profile.comm(s.comm), s.cpu, r.profile.addresses(s).front().ip, s.pid}];
      samples += s.samples;
      period += s.period;
    }
    return out;
  };
  const Recording apart = Load(false);
  const Recording merged = Load(true);
  EXPECT_EQ(apart.profile.samples().size(), 8u);
  EXPECT_EQ(merged.profile.samples().size(), 5u);
  EXPECT_EQ(sums(merged), sums(apart));
  const std::map<Key, std::pair<uint64_t, uint64_t>> want = {
      {{"first", 0, 0x400010, 5}, {3, 3000}},
      {{"first", 1, 0x400010, 5}, {1, 1000}},
      {{"first", 0, 0x400020, 5}, {1, 1000}},
      {{":6", 0, 0x400010, 6}, {1, 1000}},
      {{"renamed", 0, 0x400010, 5}, {2, 2000}}};
  EXPECT_EQ(sums(merged), want);
  EXPECT_EQ(merged.profile.sample_count(0), 8u);
  EXPECT_EQ(merged.profile.total_period(0), 8000u);
  EXPECT_EQ(merged.profile.first_time(), 20u);
  EXPECT_EQ(merged.profile.last_time(), 35u);
  EXPECT_EQ(apart.profile.last_time(), 35u);
}

// A load without chains takes each sample at its chain's first address
// when asked (a flat report: the rows of its children view's Self), else at
// its ip (--annotate). They differ for a precise event, whose chain starts
// at the interrupted ip.
TEST_F(RecordingLoaderTest, AFlatLoadTakesItsChainsLeaf) {
  attr_ = st::MakeAttr(kSampleType | PERF_SAMPLE_CALLCHAIN, true);
  Add(st::MakeComm(attr_, 5, 5, "first", true, Id(5, 10)));
  st::Mmap2Fields m = st::MakeMmap2Fields("/bin/first", 5, 5, 0x400000, 0x1000, 0);
  m.prot = 5;  // PROT_READ | PROT_EXEC
  Add(st::MakeMmap2(attr_, m, Id(5, 11)));
  st::SampleFields f;
  f.id = 7;
  f.ip = 0x400010;
  f.pid = f.tid = 5;
  f.time = 20;
  f.period = 1000;
  f.callchain = {static_cast<uint64_t>(PERF_CONTEXT_USER), 0x400020, 0x400030};
  Add(st::MakeSample(attr_, f));
  const auto leaf = [](const Recording& r) {
    return r.profile.samples().empty() ? 0 : r.profile.addresses(r.profile.samples()[0]).front().ip;
  };
  EXPECT_EQ(leaf(Load(false, /*leaf_only=*/true, /*chain_leaf=*/true)), 0x400020u);
  EXPECT_EQ(leaf(Load(false, /*leaf_only=*/true)), 0x400010u);
  EXPECT_EQ(leaf(Load(false)), 0x400020u);
}

// A load without chains (--annotate's) merges the same: a sample like an
// earlier one joins its entry at once, but not across a new mapping or a
// new name, nor from another thread, CPU or address.
TEST_F(RecordingLoaderTest, LeafOnlyLoadsMergeAsFullOnes) {
  Add(st::MakeComm(attr_, 5, 5, "first", true, Id(5, 10)));
  st::Mmap2Fields m = st::MakeMmap2Fields("/bin/first", 5, 5, 0x400000, 0x1000, 0);
  m.prot = 5;  // PROT_READ | PROT_EXEC
  Add(st::MakeMmap2(attr_, m, Id(5, 11)));
  uint64_t time = 20;
  for (int i = 0; i < 4; ++i) {
    Sample(5, 0x400010, time++);
    Sample(5, 0x400010, time++, /*cpu=*/1);
    Sample(5, 0x400020, time++);
    Sample(6, 0x400010, time++);
  }
  st::Mmap2Fields again = st::MakeMmap2Fields("/bin/second", 5, 5, 0x400000, 0x1000, 0);
  again.prot = 5;
  Add(st::MakeMmap2(attr_, again, Id(5, time++)));
  Sample(5, 0x400010, time++);
  Sample(5, 0x400010, time++);
  Add(st::MakeComm(attr_, 5, 5, "renamed", false, Id(5, time++)));
  Sample(5, 0x400010, time++);
  Sample(5, 0x400010, time);
  // (dso, comm, cpu, leaf address, pid) -> (samples, period).
  using Key = std::tuple<std::string, std::string, uint32_t, uint64_t, uint32_t>;
  auto sums = [](const Recording& r) {
    std::map<Key, std::pair<uint64_t, uint64_t>> out;
    for (const ProfileSample& s : r.profile.samples()) {
      const Function& f = r.profile.function(r.profile.frames(s).front());
      auto& [samples, period] = out[{r.profile.dso_name(f.dso), r.profile.comm(s.comm), s.cpu,
                                     r.profile.addresses(s).front().ip, s.pid}];
      samples += s.samples;
      period += s.period;
    }
    return out;
  };
  const Recording apart = Load(false);
  const Recording leaf = Load(true, /*leaf_only=*/true);
  const Recording leaf_apart = Load(false, /*leaf_only=*/true);
  const std::map<Key, std::pair<uint64_t, uint64_t>> want = {
      {{"/bin/first", "first", 0, 0x400010, 5}, {4, 4000}},
      {{"/bin/first", "first", 1, 0x400010, 5}, {4, 4000}},
      {{"/bin/first", "first", 0, 0x400020, 5}, {4, 4000}},
      {{"[unknown]", ":6", 0, 0x400010, 6}, {4, 4000}},
      {{"/bin/second", "first", 0, 0x400010, 5}, {2, 2000}},
      {{"/bin/second", "renamed", 0, 0x400010, 5}, {2, 2000}}};
  EXPECT_EQ(sums(apart), want);
  EXPECT_EQ(sums(leaf), want);
  EXPECT_EQ(sums(leaf_apart), want);
  EXPECT_EQ(leaf.stats.frames, leaf_apart.stats.frames);
  EXPECT_EQ(leaf.profile.samples().size(), want.size());
  EXPECT_EQ(leaf.stats.samples, 20u);
  EXPECT_EQ(leaf.profile.sample_count(0), 20u);
  EXPECT_EQ(leaf.profile.total_period(0), 20000u);
  EXPECT_EQ(leaf.profile.first_time(), 20u);
  EXPECT_EQ(leaf.profile.last_time(), time);
}

}  // namespace
}  // namespace sample::report
