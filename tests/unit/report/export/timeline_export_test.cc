// Tests of the timeline exports (--format speedscope, --format gecko) over
// a small synthetic recording: what each field holds (names, units,
// weights, times, frame numbering, categories), beyond the structure that
// tests/golden/timeline_export_test.cc checks on real recordings.
#include <linux/perf_event.h>

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/export/export_input.h"
#include "report/export/export_threads.h"
#include "report/export/exporter.h"

namespace sample::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

EventDesc Software(const char* name, uint64_t config, bool freq, uint64_t period_or_freq) {
  EventDesc desc;
  desc.name = name;
  desc.attr.type = PERF_TYPE_SOFTWARE;
  desc.attr.config = config;
  desc.attr.freq = freq;
  desc.attr.sample_period = period_or_freq;  // a union with sample_freq
  return desc;
}

// cpu-clock at 1000 Hz: thread 20/21 runs `sh`, then execs `prog`; thread
// 10/10 runs `other`. page-faults (not a time event): one sample of 10/10.
// The recording starts at 5 ms on the samples' clock.
class TimelineExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    recording_.events = {Software("cpu-clock", PERF_COUNT_SW_CPU_CLOCK, true, 1000),
                         Software("page-faults", PERF_COUNT_SW_PAGE_FAULTS, false, 1)};
    Profile& p = recording_.profile;
    p.set_event_names({"cpu-clock", "page-faults"});
    p.set_dso_names({"[unknown]", "[kernel.kallsyms]", "/bin/prog", "/tmp/perf-7.map"});
    main_ = p.InternFunction(2, "main", false, true, false, "prog.c:12");
    work_ = p.InternFunction(2, "work", false, true);
    inl_ = p.InternFunction(2, "helper", false, true, /*inlined=*/true);
    sys_ = p.InternFunction(1, "do_syscall_64", true, true);
    jit_ = p.InternFunction(3, "jitted", false, true);
    unknown_ = p.InternFunction(0, "[unknown] 0x10", false, false);
    recording_.metadata = {{"cmdline", "sample-record ./prog"},
                           {"start_realtime_ns", "1700000000123456789"},
                           {"start_clock_ns", "5000000"}};
    Add(0, "sh", 20, 21, 6, 1000000, {work_, main_});
    Add(0, "prog", 20, 21, 7, 2000000, {sys_, work_, main_});
    Add(0, "other", 10, 10, 8, 500000, {jit_, unknown_});
    Add(0, "prog", 20, 21, 20, 1000000, {work_, main_});  // after 11 ms off CPU
    Add(1, "other", 10, 10, 9, 3, {inl_, main_});
  }
  void Add(uint32_t event, const char* comm, uint32_t pid, uint32_t tid, uint64_t ms,
           uint64_t period, std::vector<uint32_t> frames) {
    ProfileSample s;
    s.event = event;
    s.comm = recording_.profile.InternComm(comm);
    s.pid = pid;
    s.tid = tid;
    s.time = ms * 1000000;
    s.period = period;
    recording_.profile.AddSample(s, frames);
  }
  std::string Export(OutputFormat format, ExportOptions options = {}) {
    std::vector<std::string> warnings;
    auto exporter = MakeExporter(format);
    EXPECT_TRUE(exporter) << exporter.error().message;
    auto input = BuildExportInput(recording_, SampleFilter(SampleFilterOptions{}), options,
                                  (*exporter)->single_section(), warnings);
    EXPECT_TRUE(input) << input.error().message;
    auto bytes = (*exporter)->Export(*input);
    EXPECT_TRUE(bytes) << bytes.error().message;
    return bytes ? *bytes : "";
  }

  Recording recording_;
  uint32_t main_ = 0, work_ = 0, inl_ = 0, sys_ = 0, jit_ = 0, unknown_ = 0;
};

TEST_F(TimelineExportTest, ThreadsAreSplitPerEventSortedAndNamedAfterTheirLastCommand) {
  std::vector<std::string> warnings;
  auto input =
      BuildExportInput(recording_, SampleFilter(SampleFilterOptions{}), {}, false, warnings);
  ASSERT_TRUE(input);
  const std::vector<ExportThread> threads = SplitByThread(*input);
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0].comm, "other");
  EXPECT_EQ(threads[0].tid, 10u);
  EXPECT_EQ(threads[1].comm, "prog");  // it was "sh" before exec
  EXPECT_EQ(threads[1].samples.size(), 3u);
  EXPECT_EQ(threads[2].section, 1u);
  EXPECT_EQ(TimelineZero(*input), 5000000u);
  EXPECT_EQ(RealtimeAt(*input, 6000000), 1700000000124456789u);
  EXPECT_TRUE(CountsTime(*input, 0));
  EXPECT_FALSE(CountsTime(*input, 1));
  EXPECT_DOUBLE_EQ(IntervalMs(*input, 0), 1.0);

  // Without the recording's start, the earliest kept sample is zero.
  recording_.metadata.clear();
  EXPECT_EQ(TimelineZero(*input), 6000000u);
  EXPECT_EQ(RealtimeAt(*input, 6000000), std::nullopt);
}

TEST_F(TimelineExportTest, SpeedscopeWeighsTimeEventsByPeriodInNanosecondsOthersByCount) {
  const std::string out = Export(OutputFormat::kSpeedscope);
  EXPECT_THAT(out,
              HasSubstr("\"$schema\": \"https://www.speedscope.app/file-format-schema.json\""));
  EXPECT_THAT(out, HasSubstr("\"name\": \"sample-record ./prog\""));
  // Frames in order of first use: other's stack (root first), then prog's.
  EXPECT_THAT(out,
              HasSubstr("\"frames\": [\n"
                        "      {\"name\": \"[unknown] 0x10\", \"file\": \"[unknown]\"},\n"
                        "      {\"name\": \"jitted\", \"file\": \"/tmp/perf-7.map\"},\n"
                        "      {\"name\": \"main\", \"file\": \"prog.c\", \"line\": 12},\n"
                        "      {\"name\": \"work\", \"file\": \"/bin/prog\"},\n"
                        "      {\"name\": \"do_syscall_64\", \"file\": \"[kernel.kallsyms]\"},\n"
                        "      {\"name\": \"helper (inlined)\", \"file\": \"/bin/prog\"}\n"
                        "    ]"));
  // other ran 0.5 ms up to 8 ms, 3 ms after the start.
  EXPECT_THAT(out, HasSubstr("\"name\": \"other 10/10 (cpu-clock)\",\n"
                             "      \"unit\": \"nanoseconds\",\n"
                             "      \"startValue\": 2500000,\n"
                             "      \"endValue\": 3000000,\n"
                             "      \"samples\": [\n        [0,1]\n      ],\n"
                             "      \"weights\": [\n        500000\n      ]"));
  // prog's first weights (3 ms) outlast its first span (0 to 2 ms); then it
  // did not run from 3 ms to 14 ms: a gap (an empty stack) keeps the time
  // axis, up to its last sample at 15 ms.
  EXPECT_THAT(out, HasSubstr("\"name\": \"prog 20/21 (cpu-clock)\",\n"
                             "      \"unit\": \"nanoseconds\",\n"
                             "      \"startValue\": 0,\n"
                             "      \"endValue\": 15000000,\n"
                             "      \"samples\": [\n        [2,3],\n        [2,3,4],\n"
                             "        [],\n        [2,3]\n      ],\n"
                             "      \"weights\": [\n        1000000,\n        2000000,\n"
                             "        11000000,\n        1000000\n      ]"));
  EXPECT_THAT(out, HasSubstr("\"name\": \"other 10/10 (page-faults)\",\n"
                             "      \"unit\": \"none\",\n"
                             "      \"startValue\": 0,\n"
                             "      \"endValue\": 1,\n"
                             "      \"samples\": [\n        [2,5]\n      ],\n"
                             "      \"weights\": [\n        1\n      ]"));
  EXPECT_THAT(out, HasSubstr("\"activeProfileIndex\": 1,"));  // prog: the most samples

  ExportOptions by_period;
  by_period.weight = ExportWeight::kPeriod;
  by_period.max_stack = 1;
  const std::string cut = Export(OutputFormat::kSpeedscope, by_period);
  EXPECT_THAT(cut, HasSubstr("\"samples\": [\n        [3]\n      ],\n"
                             "      \"weights\": [\n        3\n      ]"));
  EXPECT_THAT(cut, Not(HasSubstr("\"main\"")));  // only leaves are left
}

TEST_F(TimelineExportTest, GeckoTimesCountFromTheRecordingStartAndFramesHaveCategories) {
  const std::string out = Export(OutputFormat::kGecko);
  EXPECT_THAT(out, HasSubstr("\"startTime\": 1700000000123.456789,"));
  EXPECT_THAT(out, HasSubstr("\"interval\": 1.000000,"));
  EXPECT_THAT(out, HasSubstr("\"presymbolicated\": true,"));
  EXPECT_THAT(out, HasSubstr("{\"name\": \"Kernel\", \"color\": \"orange\""));
  // Two events: threads are named with theirs, cpu-clock's first.
  const size_t other = out.find("\"name\": \"other (cpu-clock)\"");
  const size_t prog = out.find("\"name\": \"prog (cpu-clock)\"");
  const size_t faults = out.find("\"name\": \"other (page-faults)\"");
  ASSERT_NE(other, std::string::npos);
  ASSERT_NE(prog, std::string::npos);
  ASSERT_NE(faults, std::string::npos);
  EXPECT_LT(other, prog);
  EXPECT_LT(prog, faults);
  const std::string prog_thread = out.substr(prog, faults - prog);
  EXPECT_THAT(prog_thread, HasSubstr("\"pid\": 20,\n      \"tid\": 21,"));
  EXPECT_THAT(prog_thread, HasSubstr("\"data\": [\n          [1, 1.000000, 0],\n"
                                     "          [2, 2.000000, 0],\n"
                                     "          [1, 15.000000, 0]\n        ]"));
  EXPECT_THAT(prog_thread, HasSubstr("\"data\": [\n          [null, 0],\n          [0, 1],\n"
                                     "          [1, 2]\n        ]"));
  // main has a source line; the kernel frame is category 1 (Kernel).
  EXPECT_THAT(prog_thread, HasSubstr("[0, false, 0, null, null, 12, null, 0, 0],\n"
                                     "          [1, false, 0, null, null, null, null, 0, 0],\n"
                                     "          [2, false, 0, null, null, null, null, 1, 0]"));
  EXPECT_THAT(prog_thread, HasSubstr("\"stringTable\": [\n        \"main (in /bin/prog)\",\n"
                                     "        \"work (in /bin/prog)\",\n"
                                     "        \"do_syscall_64 (in [kernel.kallsyms])\"\n      ]"));
  // JIT frames are category 2, unknown ones 3 (Other), inlined user ones 0.
  const std::string other_thread = out.substr(other, prog - other);
  EXPECT_THAT(other_thread, HasSubstr("[0, false, 0, null, null, null, null, 3, 0],\n"
                                      "          [1, false, 0, null, null, null, null, 2, 0]"));
  EXPECT_THAT(out.substr(faults), HasSubstr("\"helper (inlined) (in /bin/prog)\""));
  EXPECT_THAT(out.substr(faults), HasSubstr("[1, 4.000000, 0]"));
}

}  // namespace
}  // namespace sample::report
