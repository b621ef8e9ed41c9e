// Off-CPU intervals: OffCpuIntervals pairs switch-outs with switch-ins, and
// the loader turns an --off-cpu recording's sched:sched_switch samples into
// the off-cpu, off-cpu-preempted and wall pseudo-events (synthetic files).
// Throttling is timed per CPU from THROTTLE/UNTHROTTLE records.
#include "report/load/off_cpu_intervals.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "formats/sample_file_writer.h"
#include "report/load/recording_loader.h"
#include "tests/unit/synthetic_records.h"
#include "tests/unit/temp_dir.h"

namespace sample::report {
namespace {

namespace st = sample::testing;

TEST(OffCpuIntervalsTest, PairsEachSwitchOutWithTheThreadsNextSwitchIn) {
  OffCpuIntervals intervals;
  intervals.SwitchedOut(5, 100, 0);
  intervals.SwitchedOut(6, 150, 1);
  EXPECT_FALSE(intervals.SwitchedIn(7, 160));  // never left
  const auto six = intervals.SwitchedIn(6, 400);
  ASSERT_TRUE(six);
  EXPECT_EQ(six->sample, 1u);
  EXPECT_EQ(six->blocked, 250u);
  EXPECT_FALSE(six->preempted);
  intervals.MarkPreempted(5);
  const auto five = intervals.SwitchedIn(5, 1100);
  ASSERT_TRUE(five);
  EXPECT_EQ(five->sample, 0u);
  EXPECT_EQ(five->blocked, 1000u);
  EXPECT_TRUE(five->preempted);
  EXPECT_FALSE(intervals.SwitchedIn(5, 1200));  // closed already
  EXPECT_EQ(intervals.stats().intervals, 2u);
  EXPECT_TRUE(intervals.TakeUnmatched().empty());
}

TEST(OffCpuIntervalsTest, SwitchOutsThatNeverComeBackAreUnmatched) {
  OffCpuIntervals intervals;
  intervals.SwitchedOut(5, 100, 0);
  intervals.SwitchedOut(5, 200, 1);  // the first one's switch-in was lost
  intervals.SwitchedOut(6, 300, 2);
  intervals.Exited(6);
  EXPECT_FALSE(intervals.SwitchedIn(6, 400));
  intervals.SwitchedOut(7, 500, 3);
  intervals.SwitchedOut(8, 600, 4);
  EXPECT_FALSE(intervals.SwitchedIn(8, 550));  // before its switch-out: not an interval
  EXPECT_EQ(intervals.SwitchedIn(5, 260)->blocked, 60u);
  EXPECT_EQ(intervals.TakeUnmatched(), (std::vector<size_t>{0, 2, 3, 4}));
  EXPECT_EQ(intervals.stats().unmatched, 4u);
  EXPECT_EQ(intervals.stats().intervals, 1u);
}

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
constexpr uint64_t kClockId = 7;
constexpr uint64_t kSwitchId = 8;

// A recording as sample-record --off-cpu -e cpu-clock makes it: cpu-clock
// (tracking, with context_switch) and sched:sched_switch.
class OffCpuLoadTest : public ::testing::Test {
 protected:
  OffCpuLoadTest() : dir_("off_cpu_load_test"), clock_(st::MakeAttr(kSampleType, true)) {
    clock_.type = PERF_TYPE_SOFTWARE;
    clock_.config = PERF_COUNT_SW_CPU_CLOCK;
    clock_.context_switch = 1;
    switch_ = st::MakeAttr(kSampleType, true);
    switch_.type = PERF_TYPE_TRACEPOINT;
    switch_.config = 316;
  }

  st::SampleIdFields Id(uint32_t tid, uint64_t time, uint32_t cpu = 0) {
    return st::SampleIdFields{tid, tid, time, kClockId, 0, cpu};
  }
  void Sample(uint64_t id, uint32_t tid, uint64_t time, uint64_t period) {
    st::SampleFields f;
    f.id = id;
    f.ip = 0x1000 + id;
    f.pid = f.tid = tid;
    f.time = time;
    f.period = period;
    Add(st::MakeSample(id == kClockId ? clock_ : switch_, f));
  }
  // A thread leaving the CPU: the tracepoint's sample, then the record.
  void SwitchOut(uint32_t tid, uint64_t time, bool preempted = false) {
    Sample(kSwitchId, tid, time, 1);
    Add(st::MakeSwitch(clock_, true, Id(tid, time + 1), preempted));
  }
  void SwitchIn(uint32_t tid, uint64_t time) { Add(st::MakeSwitch(clock_, false, Id(tid, time))); }
  void Add(const st::Bytes& record) {
    st::Append(records_, record);
    ++count_;
  }
  Recording Load(bool wall, bool with_switch_event = true) {
    const std::string path = (dir_.path() / "r.data").string();
    auto writer = format::SampleFileWriter::Create(path, {});
    // A writer that failed to open cannot be used (a file already there
    // is refused): the test fails here, not in a call on the error.
    if (!writer) {
      ADD_FAILURE() << writer.error().message;
      return {};
    }
    std::vector<EventDesc> events(1);
    events[0].attr = clock_;
    events[0].name = "cpu-clock";
    events[0].ids = {kClockId};
    if (with_switch_event) {
      events.emplace_back();
      events[1].attr = switch_;
      events[1].name = "sched:sched_switch";
      events[1].ids = {kSwitchId};
    }
    (*writer)->Submit(format::ChunkType::kEvents, format::EncodeEvents(events));
    format::RecordsChunk chunk;
    chunk.records = records_;
    chunk.record_count = count_;
    chunk.time_min = 1;
    chunk.time_max = 5000;
    (*writer)->SubmitRecords(std::move(chunk));
    EXPECT_TRUE((*writer)->Finish(format::Trailer{}));
    LoadOptions options;
    options.jobs = 1;
    options.binaries.files.use_debuginfod = false;
    options.wall = wall;
    auto recording = LoadRecording(path, options);
    EXPECT_TRUE(recording) << recording.error().message;
    return std::move(*recording);
  }
  // Period per (event name, tid) of the loaded samples.
  static std::map<std::pair<std::string, uint32_t>, uint64_t> Periods(const Recording& r) {
    std::map<std::pair<std::string, uint32_t>, uint64_t> out;
    for (const ProfileSample& s : r.profile.samples()) {
      out[{r.profile.event_name(s.event), s.tid}] += s.period;
    }
    return out;
  }

  // Thread 5 runs 200 ns, blocks 700 ns, is preempted for 200 ns, then
  // leaves for good (exits); thread 6 leaves and the recording ends.
  void ThreadFiveAndSix() {
    Sample(kClockId, 5, 100, 100);
    Sample(kClockId, 5, 200, 100);
    SwitchOut(5, 300);
    SwitchIn(9, 310);  // a thread that never left while we watched
    SwitchIn(5, 1000);
    SwitchOut(5, 1100, /*preempted=*/true);
    SwitchIn(5, 1300);
    SwitchOut(5, 1400);
    Add(st::MakeExit(clock_, 5, 1, 5, 1, 1500, Id(5, 1500)));
    SwitchOut(6, 1450);
  }

  st::TempDir dir_;
  perf_event_attr clock_;
  perf_event_attr switch_;
  st::Bytes records_;
  uint64_t count_ = 0;
};

TEST_F(OffCpuLoadTest, SwitchOutSamplesAreWeightedByTheTimeOffTheCpu) {
  ThreadFiveAndSix();
  const Recording r = Load(/*wall=*/false);
  ASSERT_TRUE(r.off_cpu_event);
  EXPECT_EQ(*r.off_cpu_event, 2u);
  EXPECT_FALSE(r.wall_event);
  EXPECT_EQ(r.profile.event_name(2), "off-cpu");
  EXPECT_EQ(r.profile.event_name(3), "off-cpu-preempted");
  using Key = std::pair<std::string, uint32_t>;
  const std::map<Key, uint64_t> expected = {
      {{"cpu-clock", 5}, 200}, {{"off-cpu", 5}, 700}, {{"off-cpu-preempted", 5}, 200}};
  EXPECT_EQ(Periods(r), expected);
  EXPECT_EQ(r.profile.sample_count(2), 1u);  // the unmatched ones are gone
  EXPECT_EQ(r.profile.sample_count(1), 0u);  // sched:sched_switch's own
  EXPECT_EQ(r.stats.off_cpu.intervals, 2u);
  EXPECT_EQ(r.stats.off_cpu.unmatched, 2u);
  EXPECT_EQ(r.stats.malformed_records, 0u);
}

TEST_F(OffCpuLoadTest, WallAddsOnCpuAndOffCpuTimeOfEachThread) {
  ThreadFiveAndSix();
  const Recording r = Load(/*wall=*/true);
  ASSERT_TRUE(r.wall_event);
  EXPECT_EQ(*r.wall_event, 4u);
  EXPECT_EQ(r.profile.event_name(4), "wall");
  EXPECT_EQ(r.profile.total_period(4), 200u + 700u + 200u);
  EXPECT_EQ(r.profile.sample_count(4), 4u);
}

TEST_F(OffCpuLoadTest, WithoutTheTracepointSwitchesAreOnlySideband) {
  Sample(kClockId, 5, 100, 100);
  SwitchIn(5, 1000);
  const Recording r = Load(/*wall=*/true, /*with_switch_event=*/false);
  EXPECT_FALSE(r.off_cpu_event);
  EXPECT_FALSE(r.wall_event);
  EXPECT_EQ(r.profile.event_count(), 1u);
  EXPECT_EQ(r.stats.records_by_type[PERF_RECORD_SWITCH], 1u);
}

TEST_F(OffCpuLoadTest, ThrottledTimeIsSummedPerCpu) {
  // MakeThrottle's flag: true makes an UNTHROTTLE.
  Add(st::MakeThrottle(clock_, true, 10, kClockId, 0, Id(5, 10, 1)));  // throttled before
  Add(st::MakeThrottle(clock_, false, 20, kClockId, 0, Id(5, 20, 1)));
  Add(st::MakeThrottle(clock_, true, 70, kClockId, 0, Id(5, 70, 1)));
  Add(st::MakeThrottle(clock_, false, 100, kClockId, 0, Id(5, 100, 0)));  // never lifted
  Sample(kClockId, 5, 400, 100);
  const Recording r = Load(/*wall=*/false);
  EXPECT_EQ(r.stats.per_cpu.at(1).throttles, 1u);
  EXPECT_EQ(r.stats.per_cpu.at(1).throttled_ns, 50u);
  EXPECT_EQ(r.stats.per_cpu.at(0).throttles, 1u);
  EXPECT_EQ(r.stats.per_cpu.at(0).throttled_ns, 300u);  // to the last record
}

TEST_F(OffCpuLoadTest, ShortSwitchRecordsAreMalformed) {
  // A CPU-wide switch with its sample_id but without the two ids before it.
  st::Bytes torn = st::MakeSwitch(clock_, false, Id(5, 10));
  reinterpret_cast<perf_event_header*>(torn.data())->type = PERF_RECORD_SWITCH_CPU_WIDE;
  Add(torn);
  Sample(kClockId, 5, 400, 100);
  const Recording r = Load(/*wall=*/false);
  EXPECT_EQ(r.stats.malformed_records, 1u);
  EXPECT_EQ(r.stats.unknown_event_records, 0u);
}

}  // namespace
}  // namespace sample::report
