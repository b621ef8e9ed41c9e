// Tests for the kernel interface's names: record types, sample_type and
// read_format bits, attr types and clocks, and the set fields of an attr in
// the struct's order.
#include "libsample/perf/perf_names.h"

#include <linux/perf_event.h>
#include <time.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sample {
namespace {

std::vector<std::string> Names(const std::vector<AttrField>& fields) {
  std::vector<std::string> names;
  for (const AttrField& f : fields) names.push_back(f.name);
  return names;
}

TEST(PerfNamesTest, RecordTypesAreNamedAndUnknownOnesNumbered) {
  EXPECT_EQ(RecordTypeName(PERF_RECORD_SAMPLE), "SAMPLE");
  EXPECT_EQ(RecordTypeName(PERF_RECORD_MMAP2), "MMAP2");
  EXPECT_EQ(RecordTypeName(PERF_RECORD_SWITCH_CPU_WIDE), "SWITCH_CPU_WIDE");
  EXPECT_EQ(RecordTypeName(PERF_RECORD_LOST_SAMPLES), "LOST_SAMPLES");
  EXPECT_EQ(RecordTypeName(0), "TYPE_0");
  EXPECT_EQ(RecordTypeName(31), "TYPE_31");
}

TEST(PerfNamesTest, FlagsInPerfsOrderWithUnnamedBitsInHex) {
  EXPECT_EQ(SampleTypeNames(PERF_SAMPLE_TID | PERF_SAMPLE_IP | PERF_SAMPLE_IDENTIFIER),
            "IDENTIFIER|IP|TID");
  EXPECT_EQ(SampleTypeNames(PERF_SAMPLE_CPU | (uint64_t{1} << 62)), "CPU|0x4000000000000000");
  EXPECT_EQ(SampleTypeNames(0), "");
  EXPECT_EQ(ReadFormatNames(PERF_FORMAT_GROUP | PERF_FORMAT_ID), "ID|GROUP");
}

TEST(PerfNamesTest, AttrTypesAndClocks) {
  EXPECT_EQ(AttrTypeName(PERF_TYPE_SOFTWARE), "software");
  EXPECT_EQ(AttrTypeName(PERF_TYPE_HW_CACHE), "hw-cache");
  EXPECT_EQ(AttrTypeName(42), "pmu 42");
  EXPECT_EQ(ClockName(CLOCK_MONOTONIC_RAW), "CLOCK_MONOTONIC_RAW");
  EXPECT_EQ(ClockName(-5), "");
}

TEST(PerfNamesTest, SetFieldsInTheStructsOrderWithUnionsNamedBySelector) {
  perf_event_attr a{};
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.freq = 1;
  a.sample_freq = 999;
  a.disabled = 1;
  a.precise_ip = 2;
  a.watermark = 1;
  a.wakeup_watermark = 4096;
  a.sample_max_stack = 32;
  const std::vector<AttrField> fields = SetAttrFields(a);
  EXPECT_EQ(Names(fields),
            (std::vector<std::string>{"sample_freq", "disabled", "freq", "watermark", "precise_ip",
                                      "wakeup_watermark", "sample_max_stack"}));
  EXPECT_EQ(fields[4].value, 2u);
  EXPECT_FALSE(fields[4].hex);
  // config (0) is left out, as every unset field.

  perf_event_attr bp{};
  bp.type = PERF_TYPE_BREAKPOINT;
  bp.bp_addr = 0x1000;
  bp.bp_len = 8;
  EXPECT_EQ(Names(SetAttrFields(bp)), (std::vector<std::string>{"bp_addr", "bp_len"}));
}

TEST(PerfNamesTest, ClockidShowsWheneverUseClockidIsSet) {
  perf_event_attr a{};
  a.use_clockid = 1;
  a.clockid = CLOCK_REALTIME;  // 0
  const std::vector<AttrField> fields = SetAttrFields(a);
  ASSERT_EQ(Names(fields), (std::vector<std::string>{"use_clockid", "clockid"}));
  EXPECT_EQ(fields[1].value, 0u);
  EXPECT_EQ(fields[1].meaning, "CLOCK_REALTIME");
}

}  // namespace
}  // namespace sample
