// Tests for --header's event attributes: every field of perf_event_attr the
// recorder set shows, in text and in JSON, over a Recording built in code
// with attrs no golden recording has (precise_ip, context_switch,
// sample_max_stack, ...).
#include "report/views/header_view.h"

#include <linux/perf_event.h>
#include <time.h>

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/json/json_printer.h"
#include "report/report_options.h"
#include "report/text/text_header.h"
#include "report/text/text_stats.h"

namespace sample::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Recording WithAttr(const perf_event_attr& attr) {
  Recording recording;
  EventDesc event;
  event.name = "cpu-clock";
  event.attr = attr;
  event.ids = {1};
  recording.events.push_back(event);
  recording.profile.set_event_names({"cpu-clock"});
  return recording;
}

perf_event_attr FlaggedAttr() {
  perf_event_attr a{};
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.size = sizeof(a);
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
  a.freq = 1;
  a.sample_freq = 999;
  a.exclude_user = 1;
  a.precise_ip = 2;
  a.exclude_hv = 1;
  a.exclude_guest = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC_RAW;
  a.context_switch = 1;
  a.sample_max_stack = 32;
  a.wakeup_events = 4;
  a.branch_sample_type = 0x41;
  return a;
}

TEST(HeaderViewTest, TextShowsEveryAttrFieldThatWasSet) {
  const Recording recording = WithAttr(FlaggedAttr());
  const std::string text = FormatHeaderText(BuildHeaderView(recording));
  for (const char* field :
       {"precise_ip = 2", "exclude_hv = 1", "exclude_guest = 1", "use_clockid = 1",
        "clockid = 4 (CLOCK_MONOTONIC_RAW)", "context_switch = 1", "sample_max_stack = 32",
        "wakeup_events = 4", "branch_sample_type = 0x41"}) {
    EXPECT_THAT(text, HasSubstr(field)) << text;
  }
  EXPECT_THAT(text, HasSubstr("size = " + std::to_string(sizeof(perf_event_attr)))) << text;
  // Fields with a key of their own are not repeated; unset ones not shown.
  EXPECT_EQ(text.find("exclude_user = 1"), text.rfind("exclude_user = 1")) << text;
  EXPECT_THAT(text, Not(HasSubstr("freq = 1"))) << text;  // said by "sample_freq = 999"
  EXPECT_THAT(text, Not(HasSubstr("pinned"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("sigtrap"))) << text;
}

TEST(HeaderViewTest, ClockidZeroShowsWhenUseClockidSaysItMatters) {
  perf_event_attr a = FlaggedAttr();
  a.clockid = CLOCK_REALTIME;  // 0
  std::string text = FormatHeaderText(BuildHeaderView(WithAttr(a)));
  EXPECT_THAT(text, HasSubstr("clockid = 0 (CLOCK_REALTIME)")) << text;
  a.use_clockid = 0;
  text = FormatHeaderText(BuildHeaderView(WithAttr(a)));
  EXPECT_THAT(text, Not(HasSubstr("clockid"))) << text;
}

TEST(HeaderViewTest, JsonHasTheFieldsInAnAttrObject) {
  const Recording recording = WithAttr(FlaggedAttr());
  const ViewOptions view;
  JsonPrinter printer(recording, view);
  printer.Header(BuildHeaderView(recording));
  const std::string json = printer.Finish();
  EXPECT_THAT(json, HasSubstr("\"attr\": {")) << json;
  for (const char* field :
       {"\"precise_ip\": 2", "\"exclude_hv\": 1", "\"use_clockid\": 1", "\"clockid\": 4",
        "\"context_switch\": 1", "\"sample_max_stack\": 32", "\"branch_sample_type\": \"0x41\""}) {
    EXPECT_THAT(json, HasSubstr(field)) << json;
  }
}

// A recording whose file holds counts: one counter ran all the time, one
// was multiplexed (5/8 of the time), one could not be opened.
Recording WithCounts(uint32_t source) {
  Recording recording = WithAttr(FlaggedAttr());
  format::Counts counts;
  counts.source = source;
  counts.elapsed_ns = 1'500'000'000;
  format::EventCounts clock;
  clock.name = "task-clock";
  clock.count = 1'000'000;
  clock.time_enabled = clock.time_running = 1'000'000;
  clock.intervals.resize(2);
  format::EventCounts faults;
  faults.name = "page-faults";
  faults.count = 1000;
  faults.time_enabled = 800'000;
  faults.time_running = 500'000;
  format::EventCounts cycles;
  cycles.name = "cycles";
  cycles.supported = false;
  counts.events = {clock, faults, cycles};
  recording.counts = counts;
  return recording;
}

TEST(HeaderViewTest, CountsShowTheirMultiplexing) {
  const CountsInfo info = *BuildHeaderView(WithCounts(format::kCountsFromCounting)).counts;
  EXPECT_EQ(info.multiplexed, 1u);
  ASSERT_EQ(info.events.size(), 3u);
  EXPECT_FALSE(info.events[0].scaled);
  EXPECT_DOUBLE_EQ(*info.events[1].scaled, 1600);
  EXPECT_DOUBLE_EQ(info.events[1].running_pct, 62.5);
  EXPECT_FALSE(info.events[2].supported);
}

TEST(HeaderViewTest, CountsInTextHeaderAndStats) {
  const HeaderView view = BuildHeaderView(WithCounts(format::kCountsFromSampling));
  const std::string header = FormatHeaderText(view);
  EXPECT_THAT(header, HasSubstr("# counts         : final counts of the sampling events over "
                                "1.500 s, 1 of 3 events multiplexed\n"
                                "# count          : task-clock 1000000, enabled 1.000 ms, "
                                "running 1.000 ms (100.00%), 2 intervals\n"
                                "# count          : page-faults 1000 (scaled 1600), enabled "
                                "0.800 ms, running 0.500 ms (62.50%)\n"
                                "# count          : cycles <not supported>\n"))
      << header;
  const std::string stats = FormatStatsText(view, LoadStats{});
  EXPECT_THAT(stats, HasSubstr("\nCounts (final counts of the sampling events over 1.500 s, 1 of "
                               "3 events multiplexed):\n"
                               "          task-clock:        1000000  ran 100.00% of the time "
                               "enabled\n"
                               "         page-faults:           1000  ran  62.50% of the time "
                               "enabled, scaled to 1600\n"
                               "              cycles: <not supported>\n"))
      << stats;
}

TEST(HeaderViewTest, CountsInJsonOnlyWhenTheFileHasThem) {
  const ViewOptions view;
  const Recording with = WithCounts(format::kCountsFromCounting);
  JsonPrinter printer(with, view);
  printer.Header(BuildHeaderView(with));
  const std::string json = printer.Finish();
  for (const char* field :
       {"\"counts\": {", "\"source\": \"counting\"", "\"multiplexed\": 1",
        "\"time_running\": 500000", "\"running_pct\": 62.50", "\"scaled_count\": 1600",
        "\"scaled_count\": null", "\"supported\": false", "\"intervals\": 2"}) {
    EXPECT_THAT(json, HasSubstr(field)) << json;
  }
  const Recording without = WithAttr(FlaggedAttr());
  JsonPrinter plain(without, view);
  plain.Header(BuildHeaderView(without));
  EXPECT_THAT(plain.Finish(), Not(HasSubstr("counts")));
}

}  // namespace
}  // namespace sample::report
