// Sideband alone, over a file with only an events chunk: the off-CPU
// pairing of sched:sched_switch samples with switch-ins, throttled time to
// the end, lost records, and which records --script keeps.
#include "report/load/sideband.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/sample_file_reader.h"
#include "formats/sample_file_writer.h"
#include "report/load/recording_loader.h"
#include "tests/unit/synthetic_records.h"
#include "tests/unit/temp_dir.h"

namespace sample::report {
namespace {

namespace st = sample::testing;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

class SidebandTest : public ::testing::Test {
 protected:
  SidebandTest() : dir_("sideband_test"), attr_(st::MakeAttr(kSampleType, true)) {
    attr_.context_switch = 1;
    const std::string path = (dir_.path() / "s.data").string();
    auto writer = format::SampleFileWriter::Create(path, {});
    // A writer that failed to open cannot be used (a file already there
    // is refused): the test fails here, not in a call on the error.
    if (!writer) {
      ADD_FAILURE() << writer.error().message;
      return;
    }
    EventDesc clock{attr_, "cpu-clock", {7}};
    clock.attr.type = PERF_TYPE_SOFTWARE;
    clock.attr.config = PERF_COUNT_SW_CPU_CLOCK;
    EventDesc sched{attr_, "sched:sched_switch", {8}};
    sched.attr.type = PERF_TYPE_TRACEPOINT;
    (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents({clock, sched}));
    EXPECT_TRUE((*writer)->Finish(format::Trailer{}));
    auto reader = format::SampleFileReader::Open(path);
    EXPECT_TRUE(reader) << reader.error().message;
    reader_.emplace(std::move(*reader));
  }

  Sideband Make() {
    return Sideband(*reader_, options_, out_, processes_, samples_,
                    [this](uint32_t pid) { flushed_for_.push_back(pid); });
  }
  // A sched:sched_switch sample of `tid` at `time`, as the loader adds it.
  void SwitchOut(Sideband& sideband, uint32_t tid, uint64_t time) {
    ProfileSample sample;
    sample.event = 1;
    sample.pid = sample.tid = tid;
    sample.time = time;
    sample.period = 1;
    sideband.OnSample(sample, samples_.size());
    samples_.push_back(sample);
  }
  st::SampleIdFields Id(uint32_t tid, uint64_t time, uint32_t cpu = 0) {
    return st::SampleIdFields{tid, tid, time, 7, 0, cpu};
  }

  st::TempDir dir_;
  perf_event_attr attr_;
  std::optional<format::SampleFileReader> reader_;
  LoadOptions options_;
  Recording out_;
  ProcessTable processes_;
  std::vector<ProfileSample> samples_;
  std::vector<uint32_t> flushed_for_;
};

TEST_F(SidebandTest, SwitchInsWeighOffCpuSamplesAndUnmatchedOnesAreDropped) {
  Sideband sideband = Make();
  ASSERT_EQ(out_.off_cpu_event, 2u);  // after the file's two events
  SwitchOut(sideband, 10, 1000);
  SwitchOut(sideband, 11, 1100);
  EXPECT_TRUE(sideband.ApplySwitch(st::MakeSwitch(attr_, true, Id(11, 1100), true), attr_));
  EXPECT_TRUE(sideband.ApplySwitch(st::MakeSwitch(attr_, false, Id(10, 1500)), attr_));
  EXPECT_TRUE(sideband.ApplySwitch(st::MakeSwitch(attr_, false, Id(11, 1400)), attr_));
  SwitchOut(sideband, 12, 1600);  // never comes back
  sideband.Finish(2000);
  ASSERT_EQ(samples_.size(), 2u);
  EXPECT_EQ(samples_[0].event, 2u);
  EXPECT_EQ(samples_[0].period, 500u);
  EXPECT_EQ(samples_[1].event, 3u);  // preempted: off-cpu-preempted
  EXPECT_EQ(samples_[1].period, 300u);
  EXPECT_EQ(out_.stats.off_cpu.intervals, 2u);
  EXPECT_EQ(out_.stats.off_cpu.unmatched, 1u);
  EXPECT_EQ(out_.off_cpu_source, 1u);
}

TEST_F(SidebandTest, ThrottlesAreTimedToTheirEndOrTheRecordingsAndLostIsCounted) {
  Sideband sideband = Make();
  EXPECT_TRUE(
      sideband.ApplyThrottle(st::MakeThrottle(attr_, false, 100, 7, 0, Id(1, 100, 2)), attr_));
  EXPECT_TRUE(
      sideband.ApplyThrottle(st::MakeThrottle(attr_, true, 150, 7, 0, Id(1, 150, 2)), attr_));
  EXPECT_TRUE(
      sideband.ApplyThrottle(st::MakeThrottle(attr_, false, 400, 7, 0, Id(1, 400, 2)), attr_));
  EXPECT_TRUE(sideband.ApplyLost(st::MakeLost(attr_, 7, 5, Id(1, 500, 2)), attr_));
  sideband.Finish(1000);
  const CpuCounts& cpu = out_.stats.per_cpu[2];
  EXPECT_EQ(cpu.throttles, 2u);
  EXPECT_EQ(cpu.throttled_ns, 50u + 600u);
  EXPECT_EQ(cpu.lost_samples, 5u);
  EXPECT_EQ(cpu.lost_records, 1u);
  EXPECT_EQ(out_.stats.lost_samples, 5u);
}

TEST_F(SidebandTest, ExecAndNewProcessesFlushFirstAndScriptKeepsOnlyWhatIsAsked) {
  options_.sideband = KeepSideband::kSwitches;
  Sideband sideband = Make();
  const st::Bytes comm = st::MakeComm(attr_, 20, 20, "ls", true, Id(20, 10));
  EXPECT_TRUE(sideband.ApplyComm(comm, attr_));
  EXPECT_TRUE(sideband.ApplyFork(st::MakeFork(attr_, 21, 20, 21, 20, 20, Id(21, 20)), attr_));
  EXPECT_EQ(flushed_for_, (std::vector<uint32_t>{20, 21}));
  EXPECT_FALSE(sideband.ApplyComm(st::Bytes(8), attr_));  // malformed

  sideband.KeepForScript(TimedRecord{10, 0, comm}, PERF_RECORD_COMM);
  const st::Bytes in = st::MakeSwitch(attr_, false, Id(20, 30));
  sideband.KeepForScript(TimedRecord{30, 0, in}, PERF_RECORD_SWITCH);
  ASSERT_EQ(out_.sideband.size(), 1u);
  EXPECT_EQ(out_.sideband[0].time, 30u);
  EXPECT_EQ(out_.sideband[0].comm, "ls");
}

}  // namespace
}  // namespace sample::report
