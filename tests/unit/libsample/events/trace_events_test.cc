// Tracepoints as data and kprobes, below the recorder: kprobe:/kretprobe:
// parsed against the fake sysfs of tests/unit/event_spec_fixture.h, the
// tracepoint's format picked up from the fake tracefs, --filter attached to
// the event before it, the kTraceFormats chunk's round trip and raw
// payloads kept by the Profile.
#include <linux/perf_event.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "formats/chunk_codec.h"
#include "libsample/events/event_filter.h"
#include "libsample/events/event_spec.h"
#include "libsample/model/profile.h"
#include "tests/unit/event_spec_fixture.h"

namespace sample {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kOpenatFormat =
    "name: sys_enter_openat\nID: 600\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n";

class TraceEventsTest : public testing::EventParseTest {
 protected:
  void AddKprobePmu(bool retprobe = true) {
    trees_.Write("sys/bus/event_source/devices/kprobe/type", "8\n");
    if (retprobe) trees_.Write("sys/bus/event_source/devices/kprobe/format/retprobe", "config:0\n");
  }
};

TEST_F(TraceEventsTest, Kprobe) {
  AddKprobePmu();
  const EventSpec spec = Parse("kprobe:ksys_write");
  EXPECT_EQ(spec.name, "kprobe:ksys_write");
  EXPECT_EQ(spec.attr.type, 8u);
  EXPECT_EQ(spec.attr.config, 0u);
  EXPECT_EQ(spec.attr.config1, 0u);  // the recorder points it at kprobe_function
  EXPECT_EQ(spec.attr.config2, 0u);
  EXPECT_EQ(spec.kprobe_function, "ksys_write");
  EXPECT_STREQ(spec.config1_string(), "ksys_write");
  EXPECT_TRUE(spec.every_hit);

  const EventSpec offset = Parse("kprobe:do_sys_open.isra.0+0x10:k");
  EXPECT_EQ(offset.kprobe_function, "do_sys_open.isra.0");
  EXPECT_EQ(offset.attr.config2, 0x10u);
  EXPECT_EQ(offset.attr.exclude_user, 1u);
  EXPECT_EQ(offset.attr.exclude_kernel, 0u);

  const EventSpec ret = Parse("kretprobe:ksys_write");
  EXPECT_EQ(ret.attr.config, 1u);  // format/retprobe = config:0
  EXPECT_EQ(ret.kprobe_function, "ksys_write");

  // Several in a list, with other events.
  const auto specs = ParseAll("cpu-clock,kprobe:a,kretprobe:a,sched:sched_switch");
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[1].kprobe_function, "a");
  EXPECT_EQ(specs[2].attr.config, 1u);
}

TEST_F(TraceEventsTest, KprobeErrors) {
  EXPECT_THAT(Error("kprobe:ksys_write"), HasSubstr("CONFIG_KPROBE_EVENTS"));
  AddKprobePmu(/*retprobe=*/false);
  EXPECT_THAT(Error("kretprobe:ksys_write"), HasSubstr("no format/retprobe"));
  EXPECT_THAT(Error("kprobe:"), HasSubstr("expected kprobe:FUNCTION[+OFFSET]"));
  EXPECT_THAT(Error("kprobe:a b"), HasSubstr("expected kprobe:FUNCTION"));
  EXPECT_THAT(Error("kprobe:f+zz"), HasSubstr("bad offset 'zz'"));
  EXPECT_THAT(Error("kretprobe:f+4"), HasSubstr("takes no offset"));
  EXPECT_THAT(Error("kprobe:f:xyz"), HasSubstr("bad modifiers 'xyz'"));
}

TEST_F(TraceEventsTest, TracepointCarriesItsFormat) {
  trees_.Write("tracing/events/syscalls/sys_enter_openat/format", kOpenatFormat);
  EXPECT_EQ(Parse("syscalls:sys_enter_openat").trace_format, kOpenatFormat);
  EXPECT_EQ(Parse("sched:sched_switch").trace_format, "");  // the fake tree has none
}

TEST_F(TraceEventsTest, FilterGoesToTheLastEventOfItsArgument) {
  auto specs = ParseAll("cpu-clock,sched:sched_switch,syscalls:sys_enter_openat");
  ASSERT_TRUE(AttachFilters({"cpu-clock,sched:sched_switch", "syscalls:sys_enter_openat"},
                            {{0, "prev_pid == 1"}, {1, "dfd == 3"}}, &specs));
  EXPECT_EQ(specs[0].filter, "");
  EXPECT_EQ(specs[1].filter, "prev_pid == 1");
  EXPECT_EQ(specs[2].filter, "dfd == 3");
}

TEST_F(TraceEventsTest, FilterRefusals) {
  auto specs = ParseAll("sched:sched_switch,cpu-clock");
  auto not_tracepoint = AttachFilters({"sched:sched_switch,cpu-clock"}, {{0, "x == 1"}}, &specs);
  ASSERT_FALSE(not_tracepoint);
  EXPECT_THAT(not_tracepoint.error().message,
              HasSubstr("--filter 'x == 1' follows 'cpu-clock', which is not a tracepoint"));
  auto tracepoint = ParseAll("sched:sched_switch");
  auto twice = AttachFilters({"sched:sched_switch"}, {{0, "a == 1"}, {0, "b == 2"}}, &tracepoint);
  ASSERT_FALSE(twice);
  EXPECT_THAT(twice.error().message, HasSubstr("has two filters"));
  auto missing = AttachFilters({"sched:sched_switch"}, {{3, "a == 1"}}, &tracepoint);
  ASSERT_FALSE(missing);
}

TEST_F(TraceEventsTest, RefusedFilterListsTheFields) {
  trees_.Write("tracing/events/syscalls/sys_enter_openat/format", kOpenatFormat);
  EventSpec spec = Parse("syscalls:sys_enter_openat");
  spec.filter = "name == 1";
  const std::string message = FilterRefusedMessage(spec, EINVAL);
  EXPECT_THAT(message, HasSubstr("refused the filter 'name == 1' of 'syscalls:sys_enter_openat'"));
  EXPECT_THAT(message, HasSubstr("its fields: dfd, filename"));
  EXPECT_THAT(FilterRefusedMessage(spec, EPERM), HasSubstr("Operation not permitted"));
}

TEST(TraceFormatsChunkTest, RoundTrip) {
  const std::vector<format::TraceFormatEntry> entries = {
      {0, 840, std::string(kOpenatFormat), "dfd == 3"}, {3, 12, "abc", ""}, {5, 0, "", ""}};
  const auto bytes = format::EncodeTraceFormats(entries);
  EXPECT_EQ(bytes.size() % 8, 0u);
  auto decoded = format::DecodeTraceFormats(bytes, 100);
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_EQ(decoded->size(), 3u);
  EXPECT_EQ((*decoded)[0].format, kOpenatFormat);
  EXPECT_EQ((*decoded)[0].filter, "dfd == 3");
  EXPECT_EQ((*decoded)[0].tracepoint_id, 840u);
  EXPECT_EQ((*decoded)[1].event_index, 3u);
  EXPECT_EQ((*decoded)[1].format, "abc");
  // Every truncation is refused naming the offset of the entry it cuts,
  // never read past; a cut between entries keeps the entries before it.
  const size_t second = 100 + format::EncodeTraceFormats({entries[0]}).size();
  const size_t third = second + format::EncodeTraceFormats({entries[1]}).size();
  for (size_t size = 1; size < bytes.size(); ++size) {
    auto cut = format::DecodeTraceFormats(std::span(bytes).first(size), 100);
    if (size + 100 == second || size + 100 == third) {
      ASSERT_TRUE(cut) << size;
      EXPECT_EQ(cut->size(), size + 100 == second ? 1u : 2u);
      continue;
    }
    ASSERT_FALSE(cut) << size;
    const size_t entry = size + 100 < second ? 100 : size + 100 < third ? second : third;
    EXPECT_EQ(cut.error().message,
              "trace format entry at offset " + std::to_string(entry) + " is truncated");
  }
}

TEST(ProfileRawTest, PayloadsBySample) {
  Profile profile;
  const uint32_t f = profile.InternFunction(0, "f", false, true);
  std::vector<ProfileSample> samples(3);
  for (ProfileSample& s : samples) {
    const auto stack = profile.InternStack(std::vector<uint32_t>{f}, {});
    s.frames_begin = stack.begin;
    s.frames_count = stack.count;
  }
  const std::byte a[] = {std::byte{1}, std::byte{2}};
  const std::byte c[] = {std::byte{9}};
  profile.AddRaw(0, a);
  profile.AddRaw(2, c);
  profile.AddSamples(std::move(samples), {});
  ASSERT_EQ(profile.raw(profile.samples()[0]).size(), 2u);
  EXPECT_EQ(profile.raw(profile.samples()[0])[1], std::byte{2});
  EXPECT_TRUE(profile.raw(profile.samples()[1]).empty());
  ASSERT_EQ(profile.raw(profile.samples()[2]).size(), 1u);
  EXPECT_EQ(profile.raw(profile.samples()[2])[0], std::byte{9});
  const ProfileSample outside;
  EXPECT_TRUE(profile.raw(outside).empty());
}

}  // namespace
}  // namespace sample
