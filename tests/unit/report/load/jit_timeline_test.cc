// JIT code named from a recording's jitdump (kJitDump chunks): loads and
// moves applied in time order among the records, so a sample names the
// code live at its address when it was taken (code moved away, memory
// reused for other code after a GC, a load at the sample's own time), with
// source lines from debug info and the code bytes kept by (DSO, offset).
#include "report/load/jit_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "formats/embedded_codec.h"
#include "formats/sample_file_writer.h"
#include "report/load/recording_loader.h"
#include "tests/unit/jitdump_builder.h"
#include "tests/unit/synthetic_records.h"
#include "tests/unit/temp_dir.h"

namespace sample::report {
namespace {

namespace st = sample::testing;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
constexpr uint32_t kPid = 100;
constexpr uint64_t kOld = 0x7f0000001000, kNew = 0x7f0000002000;

class JitTimelineTest : public ::testing::Test {
 protected:
  JitTimelineTest() : dir_("jit_timeline_test"), attr_(st::MakeAttr(kSampleType, true)) {
    // The JIT's code heap: anonymous executable memory.
    st::Mmap2Fields m = st::MakeMmap2Fields("//anon", kPid, kPid, 0x7f0000000000, 0x10000, 0);
    m.prot = 7;
    Add(st::MakeMmap2(attr_, m, st::SampleIdFields{kPid, kPid, 1, 7, 0, 0}));
  }
  void Sample(uint64_t ip, uint64_t time) {
    st::SampleFields f;
    f.id = 7;
    f.ip = ip;
    f.pid = f.tid = kPid;
    f.time = time;
    f.period = 1000;
    Add(st::MakeSample(attr_, f));
  }
  void Add(const st::Bytes& record) {
    st::Append(records_, record);
    ++count_;
  }
  // A file with the records and `dump` split in two parts; loaded.
  Recording Load(const std::vector<std::byte>& dump, bool srclines = false) {
    const std::string path = (dir_.path() / "r.data").string();
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
    // Two parts where a record ends (a dump that is no jitdump: one part).
    const size_t first = std::max<size_t>(JitDumpWholePrefix(dump, dump.size() / 2, true), 1);
    (*writer)->Submit(format::ChunkType::kJitDump,
                      format::EncodeJitDumpPart(kPid, 0, std::span(dump).first(first)));
    (*writer)->Submit(format::ChunkType::kJitDump,
                      format::EncodeJitDumpPart(kPid, 1, std::span(dump).subspan(first)));
    EXPECT_TRUE((*writer)->Finish(format::Trailer{}));
    LoadOptions options;
    options.jobs = 1;
    options.srclines = srclines;
    options.binaries.files.use_debuginfod = false;
    auto recording = LoadRecording(path, options);
    EXPECT_TRUE(recording) << recording.error().message;
    return std::move(*recording);
  }
  // Each sample's leaf, "name (dso)", in time order.
  static std::vector<std::string> Leaves(const Recording& r) {
    std::vector<std::string> out;
    for (const ProfileSample& s : r.profile.samples()) {
      const Function& f = r.profile.function(r.profile.frames(s).front());
      out.push_back(f.name + " (" + r.profile.dso_name(f.dso) + ")");
    }
    return out;
  }

  st::TempDir dir_;
  perf_event_attr attr_;
  st::Bytes records_;
  uint64_t count_ = 0;
};

TEST_F(JitTimelineTest, SamplesNameTheCodeLiveAtTheirTime) {
  st::JitDumpBuilder dump(kPid);
  dump.DebugInfo(10, kOld, {{kOld, 7, 0, "/src/f.js"}, {kOld + 0x20, 8, 0, "/src/f.js"}})
      .Load(10, kOld, "f", 0x40, 1)
      .Move(20, kOld, kNew, 0x40, 1)
      .Load(30, kOld, "g", 0x40, 2);  // the memory f left, reused
  Sample(kOld + 0x10, 5);             // before any load: no name
  Sample(kOld + 0x10, 10);            // at the load's own time: f
  Sample(kOld + 0x10, 15);            // f
  Sample(kNew + 0x10, 25);            // f, moved
  Sample(kOld + 0x10, 25);            // f left: nothing there
  Sample(kOld + 0x10, 35);            // g
  Sample(kNew + 0x28, 35);            // f, still where it moved
  const Recording r = Load(dump.bytes(), true);
  const std::string dso = JitDumpDsoPath(kPid);
  const std::vector<std::string> leaves = Leaves(r);
  ASSERT_EQ(leaves.size(), 7u);
  EXPECT_EQ(leaves[0].find(" (" + dso + ")"), std::string::npos) << leaves[0];
  EXPECT_EQ(leaves[1], "f (" + dso + ")");
  EXPECT_EQ(leaves[2], "f (" + dso + ")");
  EXPECT_EQ(leaves[3], "f (" + dso + ")");
  EXPECT_EQ(leaves[4].find(" (" + dso + ")"), std::string::npos) << leaves[4];
  EXPECT_EQ(leaves[5], "g (" + dso + ")");
  EXPECT_EQ(leaves[6], "f (" + dso + ")");
  // Source lines from the debug info, by offset into f.
  const auto& samples = r.profile.samples();
  auto srcline = [&](const ProfileSample& s) {
    return r.profile.srcline(r.profile.function(r.profile.frames(s).front()).srcline);
  };
  EXPECT_EQ(srcline(samples[2]), "f.js:7");
  EXPECT_EQ(srcline(samples[6]), "f.js:8");
  // The counts, and where the names came from.
  EXPECT_EQ(r.stats.jitdump.dumps, 1u);
  EXPECT_EQ(r.stats.jitdump.functions, 2u);
  EXPECT_EQ(r.stats.jitdump.records.moves, 1u);
  bool named = false;
  for (const auto& [path, source] : r.stats.symbol_sources) {
    if (path == dso) named = source == "embedded jitdump (2 functions)";
  }
  EXPECT_TRUE(named);
  // The code bytes, by (DSO, offset).
  ASSERT_EQ(r.jit_code.count(dso), 1u);
  const JitFunction* g = r.jit_code.at(dso)->FunctionAt(0x40);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name, "g");
  EXPECT_EQ(g->code.size(), 0x40u);
}

TEST_F(JitTimelineTest, TheDumpNamesWhatItCoversBeforeThePerfMap) {
  st::JitDumpBuilder dump(kPid);
  dump.Load(10, kOld, "from_dump", 0x40, 1);
  Sample(kOld + 0x10, 15);
  Sample(kOld + 0x100, 15);  // not in the dump: the perf map's pseudo-DSO
  const Recording r = Load(dump.bytes());
  const std::vector<std::string> leaves = Leaves(r);
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(leaves[0], "from_dump (" + JitDumpDsoPath(kPid) + ")");
  EXPECT_NE(leaves[1].find("/tmp/perf-100.map"), std::string::npos) << leaves[1];
}

TEST_F(JitTimelineTest, BadDumpIsAWarningAndCostsOnlyItsNames) {
  std::vector<std::byte> bad = st::JitDumpBuilder(kPid, 0, 0x12345678).bytes();
  Sample(kOld + 0x10, 15);
  const Recording r = Load(bad);
  EXPECT_EQ(r.stats.samples, 1u);
  EXPECT_EQ(r.stats.jitdump.dumps, 0u);
  bool warned = false;
  for (const std::string& w : r.warnings) warned = warned || w.find("jitdump of pid 100") == 0;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace sample::report
