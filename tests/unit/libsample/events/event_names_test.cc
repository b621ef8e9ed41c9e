// Tests for the fixed event names of the -e parser: generic software and
// hardware events and their aliases, hardware cache events in perf's
// spellings, raw rNNNN events, and the close matches offered for an unknown
// name. Parsed through ParseEventList against the fake trees of
// tests/unit/event_spec_fixture.h (PMU events are candidates too).
#include "libsample/events/event_spec.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/events/event_names.h"
#include "tests/unit/event_spec_fixture.h"

namespace sample {
namespace {

using testing::ExpectPlain;
using ::testing::HasSubstr;
using ::testing::Not;

class EventNamesTest : public testing::EventParseTest {};

struct NamedCase {
  const char* text;
  uint32_t type;
  uint64_t config;
  const char* name;
};

TEST_F(EventNamesTest, GenericEventsAndAliases) {
  const NamedCase cases[] = {
      {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock"},
      {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock"},
      {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults"},
      {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults"},
      {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "minor-faults"},
      {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "major-faults"},
      {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches"},
      {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches"},
      {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations"},
      {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations"},
      {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "alignment-faults"},
      {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "emulation-faults"},
      {"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "dummy"},
      {"bpf-output", PERF_TYPE_SOFTWARE, 10, "bpf-output"},            // PERF_COUNT_SW_BPF_OUTPUT
      {"cgroup-switches", PERF_TYPE_SOFTWARE, 11, "cgroup-switches"},  // ..._CGROUP_SWITCHES
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
      {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions"},
      {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "cache-references"},
      {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache-misses"},
      {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches"},
      {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches"},
      {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "branch-misses"},
      {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus-cycles"},
      {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "ref-cycles"},
      {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
       "stalled-cycles-frontend"},
      {"idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
       "stalled-cycles-frontend"},
      {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
       "stalled-cycles-backend"},
      {"idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
       "stalled-cycles-backend"},
  };
  for (const NamedCase& c : cases) {
    const EventSpec spec = Parse(c.text);
    EXPECT_EQ(spec.attr.type, c.type) << c.text;
    EXPECT_EQ(spec.attr.config, c.config) << c.text;
    EXPECT_EQ(spec.name, c.name) << c.text;
    ExpectPlain(spec);
  }
}

// Every software event of the uapi we build against has its perf name, and
// --list-events shows it.
TEST_F(EventNamesTest, EverySoftwareEventHasAName) {
  auto listed = ListEvents(options_, "");
  ASSERT_TRUE(listed) << listed.error().message;
  for (uint64_t config = 0; config < PERF_COUNT_SW_MAX; ++config) {
    const auto named = std::find_if(
        GenericEvents().begin(), GenericEvents().end(),
        [&](const GenericEvent& e) { return e.type == PERF_TYPE_SOFTWARE && e.config == config; });
    ASSERT_NE(named, GenericEvents().end()) << "software event config " << config << " has no name";
    EXPECT_THAT(*listed, ::testing::Contains(std::string(named->canonical))) << config;
  }
}

TEST_F(EventNamesTest, HardwareCacheEvents) {
  constexpr uint64_t kMiss = uint64_t{PERF_COUNT_HW_CACHE_RESULT_MISS} << 16;
  constexpr uint64_t kStore = uint64_t{PERF_COUNT_HW_CACHE_OP_WRITE} << 8;
  constexpr uint64_t kPrefetch = uint64_t{PERF_COUNT_HW_CACHE_OP_PREFETCH} << 8;
  const NamedCase cases[] = {
      {"L1-dcache-loads", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D, "L1-dcache-loads"},
      {"L1-dcache-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D | kMiss,
       "L1-dcache-load-misses"},
      {"L1-dcache-stores", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D | kStore,
       "L1-dcache-stores"},
      {"L1-dcache-prefetch-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D | kPrefetch | kMiss,
       "L1-dcache-prefetch-misses"},
      {"L1-icache-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1I | kMiss,
       "L1-icache-load-misses"},
      {"LLC-loads", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL, "LLC-loads"},
      {"LLC-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL | kMiss, "LLC-load-misses"},
      {"LLC-stores", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL | kStore, "LLC-stores"},
      {"dTLB-loads", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB, "dTLB-loads"},
      {"dTLB-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB | kMiss,
       "dTLB-load-misses"},
      {"iTLB-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_ITLB | kMiss,
       "iTLB-load-misses"},
      {"branch-loads", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_BPU, "branch-loads"},
      {"branch-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_BPU | kMiss,
       "branch-load-misses"},
      {"node-loads", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_NODE, "node-loads"},
      {"node-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_NODE | kMiss,
       "node-load-misses"},
      // perf's other spellings, case-insensitive, shown canonically.
      {"l1d-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D | kMiss,
       "L1-dcache-load-misses"},
      {"LLC-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL | kMiss, "LLC-load-misses"},
      {"dtlb-store-miss", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB | kStore | kMiss,
       "dTLB-store-misses"},
  };
  for (const NamedCase& c : cases) {
    const EventSpec spec = Parse(c.text);
    EXPECT_EQ(spec.attr.type, c.type) << c.text;
    EXPECT_EQ(spec.attr.config, c.config) << c.text;
    EXPECT_EQ(spec.name, c.name) << c.text;
    ExpectPlain(spec);
  }
  EXPECT_THAT(Error("L1-dcache-loads-loads"), HasSubstr("unknown event"));
  EXPECT_THAT(Error("LLC-bogus"), HasSubstr("unknown event 'LLC-bogus'"));
}

TEST_F(EventNamesTest, RawEvents) {
  const EventSpec spec = Parse("r1a8");
  EXPECT_EQ(spec.attr.type, PERF_TYPE_RAW);
  EXPECT_EQ(spec.attr.config, 0x1a8u);
  EXPECT_EQ(spec.name, "r1a8");
  ExpectPlain(spec);
  EXPECT_EQ(Parse("rFFFFFFFFFFFFFFFF").attr.config, ~uint64_t{0});
  const EventSpec with_mods = Parse("r3c:u");
  EXPECT_EQ(with_mods.attr.config, 0x3cu);
  EXPECT_EQ(with_mods.attr.exclude_kernel, 1u);
  EXPECT_THAT(Error("rzz"), HasSubstr("unknown event 'rzz'"));
  EXPECT_THAT(Error("r10000000000000000"), HasSubstr("unknown event"));
}

TEST_F(EventNamesTest, UnknownEventsSuggestCloseNames) {
  const std::string typo = Error("cycels");
  EXPECT_THAT(typo, HasSubstr("unknown event 'cycels'"));
  EXPECT_THAT(typo, HasSubstr("did you mean: cycles"));
  // Substring matches, cache events and PMU events are candidates too.
  EXPECT_THAT(Error("dcache"), HasSubstr("L1-dcache-loads"));
  EXPECT_THAT(Error("cache-mises"), HasSubstr("fakepmu/cache-misses/"));
  const std::string nothing = Error("xyzzyplugh");
  EXPECT_THAT(nothing, HasSubstr("unknown event 'xyzzyplugh'"));
  EXPECT_THAT(nothing, HasSubstr("--list-events"));
  EXPECT_THAT(nothing, Not(HasSubstr("did you mean")));
}

}  // namespace
}  // namespace sample
