// Tests of --format pprof: our own output gunzipped and parsed with the
// classes protoc generates from report/proto/profile.proto, for a small
// hand-made profile (inlined calls, mappings, merged samples, --max-stack)
// and for the checked-in recording tests/golden/split.data, whole and
// filtered.
#include <linux/perf_event.h>
#include <zlib.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/export/export_input.h"
#include "report/export/gzip.h"
#include "report/export/pprof_export.h"
#include "report/export/proto/profile.pb.h"
#include "report/load/recording_loader.h"

namespace sample::report {
namespace {

using ::testing::ElementsAre;

// `bytes` inflated as a gzip file; fails the test when they are not one.
std::string Gunzip(const std::string& bytes) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);  // 16: expect a gzip header, not zlib's
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buffer[1 << 16];
  int status = Z_OK;
  while (status == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    status = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - z.avail_out);
  }
  EXPECT_EQ(status, Z_STREAM_END) << "not a whole gzip stream";
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the gzip stream";
  inflateEnd(&z);
  return out;
}

pprof::Profile Decode(const Result<std::string>& bytes) {
  pprof::Profile profile;
  EXPECT_TRUE(bytes) << bytes.error().message;
  if (bytes) {
    EXPECT_TRUE(profile.ParseFromString(Gunzip(*bytes)));
  }
  return profile;
}

// The decoded profile with its ids and strings resolved, checking on the
// way that every id is nonzero, unique and refers to something that exists.
struct Decoded {
  explicit Decoded(pprof::Profile p) : profile(std::move(p)) {
    EXPECT_GT(profile.string_table_size(), 0);
    if (profile.string_table_size() > 0) {
      EXPECT_EQ(profile.string_table(0), "");
    }
    for (const auto& m : profile.mapping()) EXPECT_TRUE(mappings.emplace(m.id(), &m).second);
    for (const auto& f : profile.function()) EXPECT_TRUE(functions.emplace(f.id(), &f).second);
    for (const auto& l : profile.location()) {
      EXPECT_TRUE(locations.emplace(l.id(), &l).second);
      EXPECT_TRUE(l.mapping_id() == 0 || mappings.contains(l.mapping_id())) << l.id();
      for (const auto& line : l.line()) EXPECT_TRUE(functions.contains(line.function_id()));
    }
    for (const auto& s : profile.sample()) {
      EXPECT_EQ(s.value_size(), profile.sample_type_size());
      for (uint64_t id : s.location_id()) EXPECT_TRUE(locations.contains(id)) << id;
    }
    EXPECT_TRUE(mappings.count(0) == 0 && functions.count(0) == 0 && locations.count(0) == 0);
  }
  // The maps point into `profile`: not copied, not moved.
  Decoded(const Decoded&) = delete;
  Decoded& operator=(const Decoded&) = delete;

  const std::string& Str(int64_t index) const { return profile.string_table(index); }
  // The function names of a location's lines, innermost first.
  std::vector<std::string> Lines(uint64_t location) const {
    std::vector<std::string> names;
    for (const auto& line : locations.at(location)->line()) {
      names.push_back(Str(functions.at(line.function_id())->name()));
    }
    return names;
  }
  std::string Leaf(const pprof::Sample& s) const { return Lines(s.location_id(0)).front(); }
  std::string Label(const pprof::Sample& s, const std::string& key) const {
    for (const auto& label : s.label()) {
      if (Str(label.key()) == key)
        return label.str() ? Str(label.str()) : std::to_string(label.num());
    }
    return "";
  }
  // pprof's file offset of `address` in its location's mapping.
  uint64_t FileOffset(const pprof::Location& l) const {
    const pprof::Mapping& m = *mappings.at(l.mapping_id());
    EXPECT_TRUE(m.memory_start() <= l.address() && l.address() < m.memory_limit());
    return l.address() - m.memory_start() + m.file_offset();
  }

  pprof::Profile profile;
  std::map<uint64_t, const pprof::Mapping*> mappings;
  std::map<uint64_t, const pprof::Function*> functions;
  std::map<uint64_t, const pprof::Location*> locations;
};

// A program with two levels of inlined calls, a kernel frame, and a
// library in another process.
class PprofExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Profile& p = recording_.profile;
    p.set_event_names({"cpu-clock"});
    EventDesc clock;
    clock.name = "cpu-clock";
    clock.attr.type = PERF_TYPE_SOFTWARE;
    clock.attr.config = PERF_COUNT_SW_CPU_CLOCK;
    clock.attr.freq = 1;
    clock.attr.sample_freq = 1000;
    recording_.events = {clock};
    p.set_dso_names({"[unknown]", "[kernel.kallsyms]", "/bin/prog", "/lib/libc.so.6"});
    const uint32_t main = p.InternFunction(2, "main", false, true);
    const uint32_t work = p.InternFunction(2, "work", false, true);
    const uint32_t helper = p.InternFunction(2, "helper", false, true, /*inlined=*/true);
    const uint32_t inner = p.InternFunction(2, "inner", false, true, /*inlined=*/true);
    const uint32_t sys = p.InternFunction(1, "do_syscall_64", true, true);
    const uint32_t memcpy = p.InternFunction(3, "memcpy", false, true);
    recording_.metadata = {{"cmdline", "sample-record -g ./prog"},
                           {"hostname", "build-7"},
                           {"start_realtime_ns", "1700000000000000000"}};
    recording_.build_ids = {{"/bin/prog", "abcd"}, {"/lib/libc.so.6", "ef01"}};
    // libc at load bias 0x7f0000000000 in pid 20, met first.
    Add(other_, 20, 7, {memcpy}, {{0x7f0000012345, 5, 0x12345}});
    // prog at load bias 0x400000 in pid 10: inner and helper are inlined
    // into work at 0x401010.
    const FrameAddress at_work{0x401010, 0x10, 0x1010}, at_main{0x401100, 0x20, 0x1100};
    Add(prog_, 10, 100, {inner, helper, work, main}, {at_work, at_work, at_work, at_main});
    Add(prog_, 10, 300, {sys, work, main},
        {{0xffffffff81000010, 0x10}, {0x401020, 0x20, 0x1020}, at_main});
    Add(prog_, 10, 50, {inner, helper, work, main}, {at_work, at_work, at_work, at_main});
  }
  void Add(uint32_t comm, uint32_t pid, uint64_t period, std::vector<uint32_t> frames,
           std::vector<FrameAddress> addresses) {
    ProfileSample s;
    s.comm = comm;
    s.pid = s.tid = pid;
    s.period = period;
    s.time = pid * 1000;
    recording_.profile.AddSample(s, frames, addresses);
  }
  Decoded Export(ExportOptions options = {}) {
    std::vector<std::string> warnings;
    auto input = BuildExportInput(recording_, SampleFilter(), options, false, warnings);
    EXPECT_TRUE(input);
    return Decoded(Decode(PprofExporter().Export(*input)));
  }

  Recording recording_;
  uint32_t prog_ = recording_.profile.InternComm("prog");
  uint32_t other_ = recording_.profile.InternComm("other");
};

TEST_F(PprofExportTest, HeaderSaysWhatTheValuesCountAndWhereTheyCameFrom) {
  Decoded d = Export();
  const pprof::Profile& p = d.profile;
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(d.Str(p.sample_type(0).type()), "samples");
  EXPECT_EQ(d.Str(p.sample_type(0).unit()), "count");
  EXPECT_EQ(d.Str(p.sample_type(1).type()), "cpu-clock");
  EXPECT_EQ(d.Str(p.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(d.Str(p.default_sample_type()), "cpu-clock");
  EXPECT_EQ(d.Str(p.period_type().type()), "cpu-clock");
  EXPECT_EQ(d.Str(p.period_type().unit()), "nanoseconds");
  EXPECT_EQ(p.period(), (7 + 100 + 300 + 50) / 4);  // -F: the mean period
  // The command line first, then what a continuous-profiling backend
  // labels an upload with: host, command, time range.
  ASSERT_EQ(p.comment_size(), 4);
  EXPECT_EQ(d.Str(p.comment(0)), "sample-record -g ./prog");
  EXPECT_EQ(d.Str(p.comment(1)), "hostname=build-7");
  EXPECT_EQ(d.Str(p.comment(2)), "command=sample-record -g ./prog");
  EXPECT_EQ(d.Str(p.comment(3)), fmt::format("time_range=1700000000000000000..{}",
                                             1700000000000000000 + p.duration_nanos()));
  EXPECT_EQ(p.time_nanos(), 1700000000000000000);
  std::set<std::string> strings(p.string_table().begin(), p.string_table().end());
  EXPECT_EQ(strings.size(), static_cast<size_t>(p.string_table_size())) << "strings repeat";
}

TEST_F(PprofExportTest, EqualStacksOfOneThreadAreOneSampleWithSummedValues) {
  Decoded d = Export();
  const pprof::Profile& p = d.profile;
  ASSERT_EQ(p.sample_size(), 3);
  EXPECT_EQ(d.Leaf(p.sample(0)), "memcpy");
  EXPECT_THAT(p.sample(0).value(), ElementsAre(1, 7));
  EXPECT_EQ(d.Label(p.sample(0), "comm"), "other");
  EXPECT_EQ(d.Label(p.sample(0), "pid"), "20");
  EXPECT_EQ(d.Label(p.sample(0), "tid"), "20");
  EXPECT_THAT(p.sample(1).value(), ElementsAre(2, 150));
  EXPECT_EQ(d.Label(p.sample(1), "comm"), "prog");
  EXPECT_THAT(p.sample(2).value(), ElementsAre(1, 300));
}

TEST_F(PprofExportTest, InlinedCallsAreLinesOfTheLocationOfTheirAddressInnermostFirst) {
  Decoded d = Export();
  const pprof::Sample& s = d.profile.sample(1);
  ASSERT_EQ(s.location_id_size(), 2);
  EXPECT_THAT(d.Lines(s.location_id(0)), ElementsAre("inner", "helper", "work"));
  EXPECT_THAT(d.Lines(s.location_id(1)), ElementsAre("main"));
  EXPECT_EQ(d.locations.at(s.location_id(0))->address(), 0x401010u);
  // main's location is shared with the kernel sample's stack.
  const pprof::Sample& kernel = d.profile.sample(2);
  ASSERT_EQ(kernel.location_id_size(), 3);
  EXPECT_THAT(d.Lines(kernel.location_id(0)), ElementsAre("do_syscall_64"));
  EXPECT_EQ(kernel.location_id(2), s.location_id(1));
  // One function per name, named as the report names it.
  std::set<std::string> names;
  for (const auto& f : d.profile.function()) {
    EXPECT_TRUE(names.insert(d.Str(f.name())).second);
    EXPECT_EQ(f.system_name(), f.name());
  }
  EXPECT_EQ(names.size(), 6u);
}

TEST_F(PprofExportTest, MappingsAreRebuiltFromFileOffsetsProgramFirst) {
  Decoded d = Export();
  ASSERT_EQ(d.profile.mapping_size(), 3);
  const pprof::Mapping& prog = d.profile.mapping(0);
  EXPECT_EQ(prog.id(), 1u);
  EXPECT_EQ(d.Str(prog.filename()), "/bin/prog");
  EXPECT_EQ(d.Str(prog.build_id()), "abcd");
  EXPECT_EQ(prog.memory_start(), 0x401010u);
  EXPECT_EQ(prog.memory_limit(), 0x401101u);
  EXPECT_EQ(prog.file_offset(), 0x1010u);
  EXPECT_TRUE(prog.has_functions());
  EXPECT_TRUE(prog.has_inline_frames());
  const pprof::Mapping& libc = d.profile.mapping(1);
  EXPECT_EQ(d.Str(libc.filename()), "/lib/libc.so.6");
  EXPECT_EQ(d.Str(libc.build_id()), "ef01");
  EXPECT_EQ(libc.file_offset(), 0x12345u);
  EXPECT_FALSE(libc.has_inline_frames());
  const pprof::Mapping& kernel = d.profile.mapping(2);
  EXPECT_EQ(d.Str(kernel.filename()), "[kernel.kallsyms]");
  EXPECT_EQ(kernel.memory_start(), 0xffffffff81000010u);
  EXPECT_EQ(kernel.file_offset(), 0u);
  // Every address in a program mapping is at its own file offset.
  for (const auto& l : d.profile.location()) {
    if (l.mapping_id() == 1) {
      EXPECT_EQ(d.FileOffset(l), l.address() - 0x400000);
    } else if (l.mapping_id() == 2) {
      EXPECT_EQ(d.FileOffset(l), 0x12345u);
    }
  }
}

TEST_F(PprofExportTest, MaxStackCutsLocationsToo) {
  ExportOptions options;
  options.max_stack = 1;
  Decoded d = Export(options);
  ASSERT_EQ(d.profile.sample_size(), 3);
  ASSERT_EQ(d.profile.sample(1).location_id_size(), 1);
  // The frame kept is the innermost inlined call, alone at its address.
  EXPECT_THAT(d.Lines(d.profile.sample(1).location_id(0)), ElementsAre("inner"));
  EXPECT_THAT(d.profile.sample(1).value(), ElementsAre(2, 150));
}

TEST_F(PprofExportTest, SeveralEventsAreColumnsOfTheSameSamples) {
  Profile& p = recording_.profile;
  p.set_event_names({"cpu-clock", "page-faults"});
  EventDesc faults;
  faults.name = "page-faults";
  faults.attr.type = PERF_TYPE_SOFTWARE;
  faults.attr.config = PERF_COUNT_SW_PAGE_FAULTS;
  faults.attr.sample_period = 1;
  recording_.events.push_back(faults);
  ProfileSample s;
  s.event = 1;
  s.comm = other_;
  s.pid = s.tid = 20;
  s.period = 1;
  const uint32_t memcpy = p.InternFunction(3, "memcpy", false, true);
  p.AddSample(s, std::vector<uint32_t>{memcpy},
              std::vector<FrameAddress>{{0x7f0000012345, 5, 0x12345}});
  Decoded d = Export();
  ASSERT_EQ(d.profile.sample_type_size(), 4);
  std::vector<std::string> types;
  for (const auto& t : d.profile.sample_type())
    types.push_back(d.Str(t.type()) + "/" + d.Str(t.unit()));
  EXPECT_THAT(types, ElementsAre("cpu-clock-samples/count", "cpu-clock/nanoseconds",
                                 "page-faults-samples/count", "page-faults/count"));
  EXPECT_EQ(d.Str(d.profile.default_sample_type()), "cpu-clock");
  // The page fault hit memcpy's stack in pid 20: the same pprof sample.
  ASSERT_EQ(d.profile.sample_size(), 3);
  EXPECT_THAT(d.profile.sample(0).value(), ElementsAre(1, 7, 1, 1));
  EXPECT_THAT(d.profile.sample(1).value(), ElementsAre(2, 150, 0, 0));
}

TEST(GzipTest, CompressesToOneGzipMember) {
  const std::string text(100000, 'x');
  auto gz = GzipCompress(text);
  ASSERT_TRUE(gz);
  ASSERT_GE(gz->size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>((*gz)[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>((*gz)[1]), 0x8b);
  EXPECT_LT(gz->size(), 1000u);
  EXPECT_EQ(Gunzip(*gz), text);
  auto empty = GzipCompress("");
  ASSERT_TRUE(empty);
  EXPECT_EQ(Gunzip(*empty), "");
}

// tests/golden/split.data: two processes of split (pids 2242 and 2243),
// 302 cpu-clock samples at 1 ms.
class PprofSplitTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    LoadOptions options;
    options.binaries.files.symfs = GOLDEN_DIR "/symfs";
    options.binaries.files.use_debuginfod = false;
    auto loaded = LoadRecording(GOLDEN_DIR "/split.data", options);
    ASSERT_TRUE(loaded) << loaded.error().message;
    recording_ = new Recording(std::move(*loaded));
  }
  static void TearDownTestSuite() { delete recording_; }
  static Decoded Export(SampleFilterOptions filter, size_t* kept) {
    std::vector<std::string> warnings;
    auto input =
        BuildExportInput(*recording_, SampleFilter(std::move(filter)), {}, false, warnings);
    EXPECT_TRUE(input);
    *kept = input->sections[0].samples.size();
    return Decoded(Decode(PprofExporter().Export(*input)));
  }
  // Sample and period sums per leaf function.
  static std::map<std::string, std::pair<int64_t, int64_t>> ByLeaf(const Decoded& d) {
    std::map<std::string, std::pair<int64_t, int64_t>> sums;
    for (const auto& s : d.profile.sample()) {
      auto& [samples, period] = sums[d.Leaf(s)];
      samples += s.value(0);
      period += s.value(1);
    }
    return sums;
  }
  static Recording* recording_;
};
Recording* PprofSplitTest::recording_ = nullptr;

TEST_F(PprofSplitTest, EverySampleIsCountedOnceWithItsPeriod) {
  size_t kept = 0;
  Decoded d = Export({}, &kept);
  EXPECT_EQ(kept, 302u);
  int64_t samples = 0, period = 0;
  for (const auto& s : d.profile.sample()) {
    samples += s.value(0);
    period += s.value(1);
  }
  EXPECT_EQ(samples, 302);
  EXPECT_EQ(period, static_cast<int64_t>(recording_->profile.total_period(0)));
  // The flat profile's figures (tests/golden/expected/no_children).
  auto leaves = ByLeaf(d);
  EXPECT_EQ(leaves["compute_sixty"].first, 179);
  EXPECT_EQ(leaves["compute_thirty"].first, 90);
  EXPECT_EQ(leaves["compute_ten"].first, 30);
  EXPECT_EQ(d.Str(d.profile.comment(0)).substr(0, 14), "sample-record ");
  EXPECT_NEAR(d.profile.duration_nanos(), 487e6, 1e6);
}

TEST_F(PprofSplitTest, BothProcessesMapSplitAtTheirOwnAddressesWithTheSameFileOffsets) {
  size_t kept = 0;
  Decoded d = Export({}, &kept);
  std::set<uint64_t> starts;
  for (const auto& m : d.profile.mapping()) {
    if (d.Str(m.filename()) != "/tmp/sample-golden/split") continue;
    EXPECT_EQ(d.Str(m.build_id()), "f942cfaacf9f3449a7dff4b3f66b6a8f62e11506");
    starts.insert(m.memory_start() - m.file_offset());
  }
  EXPECT_EQ(starts.size(), 2u) << "one load address per process";
  // nm of the checked-in binary: compute_sixty is [0x1232, 0x12bc), and its
  // text segment maps file offset == address.
  int seen = 0;
  for (const auto& l : d.profile.location()) {
    if (l.line_size() == 0 ||
        d.Str(d.functions.at(l.line(0).function_id())->name()) != "compute_sixty") {
      continue;
    }
    ++seen;
    EXPECT_GE(d.FileOffset(l), 0x1232u);
    EXPECT_LT(d.FileOffset(l), 0x12bcu);
  }
  EXPECT_GT(seen, 2);
}

TEST_F(PprofSplitTest, OnlyTheKeptSamplesAreExported) {
  SampleFilterOptions filter;
  filter.pids = {2243};
  size_t kept = 0;
  Decoded d = Export(filter, &kept);
  EXPECT_GT(kept, 100u);
  EXPECT_LT(kept, 200u);
  int64_t samples = 0;
  for (const auto& s : d.profile.sample()) {
    samples += s.value(0);
    EXPECT_EQ(d.Label(s, "pid"), "2243");
  }
  EXPECT_EQ(samples, static_cast<int64_t>(kept));
  // Mappings of the other process are gone with its samples.
  std::set<uint64_t> split_starts;
  for (const auto& m : d.profile.mapping()) {
    if (d.Str(m.filename()) == "/tmp/sample-golden/split") split_starts.insert(m.memory_start());
  }
  EXPECT_EQ(split_starts.size(), 1u);

  SampleFilterOptions by_symbol;
  by_symbol.symbols = {"compute_ten"};
  Decoded ten = Export(by_symbol, &kept);
  EXPECT_EQ(kept, 30u);
  auto leaves = ByLeaf(ten);
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_EQ(leaves.begin()->first, "compute_ten");
  EXPECT_EQ(leaves.begin()->second.first, 30);
}

}  // namespace
}  // namespace sample::report
