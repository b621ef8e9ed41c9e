// Tests for --header's event attributes: every field of perf_event_attr the
// recorder set shows, in text and in JSON, over a Recording built in code
// with attrs no golden recording has (precise_ip, context_switch,
// sample_max_stack, ...).
#include "report/header_view.h"

#include <linux/perf_event.h>
#include <time.h>

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/json_printer.h"
#include "report/report_options.h"
#include "report/text_header.h"

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

}  // namespace
}  // namespace sample::report
