// The attr policy alone (BuildEventAttrs): hand-made specs and a fixed
// host, nothing opened and nothing read from this machine, so every
// decision is checked the same everywhere: the sample layout of each call
// graph mode, sample_id_all, frequency or period, tracepoints' raw
// payload, the sideband's event (the first, or the dummy for -D and
// --control), inherit and enable-on-exec, the ring size and the CPU field.
#include "record/events/event_attrs.h"

#include <linux/perf_event.h>

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "record/events/ring_size.h"

namespace sample::record {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kBaseLayout =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
constexpr uint64_t kUserBits = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

EventSpec Software(const std::string& name, uint64_t config) {
  EventSpec spec;
  spec.name = name;
  spec.attr.type = PERF_TYPE_SOFTWARE;
  spec.attr.config = config;
  return spec;
}

EventSpec CpuClock() { return Software("cpu-clock", PERF_COUNT_SW_CPU_CLOCK); }

EventSpec Tracepoint() {
  EventSpec spec;
  spec.name = "sched:sched_switch";
  spec.attr.type = PERF_TYPE_TRACEPOINT;
  spec.attr.config = 316;
  spec.every_hit = true;
  return spec;
}

RecordTarget Command() {
  RecordTarget target;
  target.kind = TargetKind::kCommand;
  target.cpus = {0, 1};
  target.threads = {1};
  return target;
}

HostLimits Host() {
  HostLimits host;
  host.page_size = 4096;
  host.online_cpus = 2;
  host.memory_bytes = 8ull << 30;
  host.may_lock_more = false;
  host.max_stack = 127;
  return host;
}

SamplingDefaults WithCallGraph(std::string_view mode) {
  SamplingDefaults defaults;
  defaults.arch = Arch::kX86_64;
  defaults.chain_capture = ParseChainCapture(mode).value();
  return defaults;
}

EventAttrs Build(std::vector<EventSpec> specs, const SamplingDefaults& defaults,
                 const RecordTarget& target = Command()) {
  auto built = BuildEventAttrs(std::move(specs), defaults, target, Host());
  EXPECT_TRUE(built) << built.error().message;
  return built ? std::move(*built) : EventAttrs{};
}

TEST(EventAttrsTest, CallGraphModesSetTheSampleLayout) {
  const perf_event_attr none = Build({CpuClock()}, WithCallGraph("no")).attrs.at(0);
  EXPECT_EQ(none.sample_type, kBaseLayout);

  const perf_event_attr fp = Build({CpuClock()}, WithCallGraph("fp")).attrs.at(0);
  EXPECT_EQ(fp.sample_type, kBaseLayout | PERF_SAMPLE_CALLCHAIN);
  EXPECT_EQ(fp.sample_stack_user, 0u);

  const perf_event_attr dwarf = Build({CpuClock()}, WithCallGraph("dwarf,4096")).attrs.at(0);
  EXPECT_EQ(dwarf.sample_type, kBaseLayout | PERF_SAMPLE_CALLCHAIN | kUserBits);
  EXPECT_EQ(dwarf.sample_stack_user, 4096u);
  EXPECT_NE(dwarf.sample_regs_user, 0u);
  EXPECT_TRUE(dwarf.exclude_callchain_user);  // user frames come from the copy

  const perf_event_attr leaf = Build({CpuClock()}, WithCallGraph("fp,leaf,512")).attrs.at(0);
  EXPECT_EQ(leaf.sample_type, kBaseLayout | PERF_SAMPLE_CALLCHAIN | kUserBits);
  EXPECT_EQ(leaf.sample_stack_user, 512u);
  EXPECT_FALSE(leaf.exclude_callchain_user);  // the fp chain stays, the copy checks its leaf
  EXPECT_LT(__builtin_popcountll(leaf.sample_regs_user),
            __builtin_popcountll(dwarf.sample_regs_user));

  SamplingDefaults deep = WithCallGraph("fp");
  deep.max_stack = 300;
  EXPECT_EQ(Build({CpuClock()}, deep).attrs.at(0).sample_max_stack, 300u);
}

TEST(EventAttrsTest, EveryEventHasSampleIdAllAndMonotonicTime) {
  const EventAttrs built = Build({CpuClock(), Tracepoint()}, SamplingDefaults{});
  for (const perf_event_attr& attr : built.attrs) {
    EXPECT_TRUE(attr.sample_id_all);
    EXPECT_TRUE(attr.use_clockid);
    EXPECT_EQ(attr.clockid, CLOCK_MONOTONIC);
    // Two events: every record names its own.
    EXPECT_TRUE(attr.sample_type & PERF_SAMPLE_IDENTIFIER);
    EXPECT_TRUE(attr.read_format & PERF_FORMAT_TOTAL_TIME_ENABLED);
    EXPECT_TRUE(attr.read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
  }
  EXPECT_FALSE(Build({CpuClock()}, SamplingDefaults{}).attrs[0].sample_type &
               PERF_SAMPLE_IDENTIFIER);
}

TEST(EventAttrsTest, FrequencyPeriodOrEveryHit) {
  const EventAttrs plain = Build({CpuClock(), Tracepoint()}, SamplingDefaults{});
  EXPECT_TRUE(plain.attrs[0].freq);
  EXPECT_EQ(plain.attrs[0].sample_freq, kDefaultFrequency);
  EXPECT_FALSE(plain.attrs[1].freq);  // a tracepoint counts occurrences
  EXPECT_EQ(plain.attrs[1].sample_period, 1u);

  SamplingDefaults f;
  f.frequency = 999;
  const EventAttrs with_f = Build({CpuClock(), Tracepoint()}, f);
  for (const perf_event_attr& attr : with_f.attrs) {
    EXPECT_TRUE(attr.freq);
    EXPECT_EQ(attr.sample_freq, 999u);
  }

  SamplingDefaults c;
  c.period = 12345;
  const perf_event_attr with_c = Build({CpuClock()}, c).attrs[0];
  EXPECT_FALSE(with_c.freq);
  EXPECT_EQ(with_c.sample_period, 12345u);

  // The event's own term wins over -c.
  EventSpec own = CpuClock();
  own.period_given = true;
  own.attr.sample_period = 77;
  EXPECT_EQ(Build({own}, c).attrs[0].sample_period, 77u);
}

TEST(EventAttrsTest, TracepointsCarryTheirRawPayload) {
  const EventAttrs built = Build({CpuClock(), Tracepoint()}, SamplingDefaults{});
  EXPECT_FALSE(built.attrs[0].sample_type & PERF_SAMPLE_RAW);
  EXPECT_TRUE(built.attrs[1].sample_type & PERF_SAMPLE_RAW);
  // Small enough that the writer inserts the CPU: none in the ring.
  ASSERT_TRUE(built.cpu_field.has_value());
  EXPECT_FALSE(built.attrs[1].sample_type & PERF_SAMPLE_CPU);
}

// -c N on an event the kernel counts hit by hit (page-faults, tracepoints,
// breakpoints): the samples leave the period out, or the kernel would write
// every hit; the clocks, sampled by a timer, and frequencies keep it.
TEST(EventAttrsTest, FixedPeriodsOfHitCountedEventsLeaveThePeriodOut) {
  SamplingDefaults every20;
  every20.period = 20;
  const EventAttrs fixed = Build(
      {Software("page-faults", PERF_COUNT_SW_PAGE_FAULTS), CpuClock(), Tracepoint()}, every20);
  EXPECT_FALSE(fixed.attrs[0].sample_type & PERF_SAMPLE_PERIOD);
  EXPECT_EQ(fixed.attrs[0].sample_period, 20u);
  EXPECT_TRUE(fixed.attrs[1].sample_type & PERF_SAMPLE_PERIOD);
  EXPECT_FALSE(fixed.attrs[2].sample_type & PERF_SAMPLE_PERIOD);
  SamplingDefaults every1;
  every1.period = 1;
  EXPECT_TRUE(
      Build({Software("page-faults", PERF_COUNT_SW_PAGE_FAULTS)}, every1).attrs[0].sample_type &
      PERF_SAMPLE_PERIOD);
  SamplingDefaults frequency;
  frequency.frequency = 100;
  EXPECT_TRUE(
      Build({Software("page-faults", PERF_COUNT_SW_PAGE_FAULTS)}, frequency).attrs[0].sample_type &
      PERF_SAMPLE_PERIOD);
}

// -d: every event samples the data address, the tracking one reports the
// mappings of data too; --phys-data and --data-page-size add their fields.
TEST(EventAttrsTest, DataAddresses) {
  SamplingDefaults defaults;
  defaults.data.addresses = true;
  EventAttrs built =
      Build({Software("page-faults", PERF_COUNT_SW_PAGE_FAULTS), CpuClock()}, defaults);
  for (const perf_event_attr& a : built.attrs) {
    EXPECT_TRUE(a.sample_type & PERF_SAMPLE_ADDR);
    EXPECT_FALSE(a.sample_type & (PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_PAGE_SIZE));
  }
  EXPECT_TRUE(built.attrs[built.tracking].mmap_data);
  EXPECT_FALSE(built.attrs[1 - built.tracking].mmap_data);
  // The CPU field goes in after the address, where the kernel puts it.
  ASSERT_TRUE(built.cpu_field.has_value());
  EXPECT_EQ(built.cpu_field->sample_offset, 8u + 5 * 8);  // header, id, ip, tid, time, addr

  defaults.data.physical = true;
  defaults.data.page_size = true;
  built = Build({CpuClock()}, defaults);
  EXPECT_EQ(built.attrs[0].sample_type &
                (PERF_SAMPLE_ADDR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_PAGE_SIZE),
            uint64_t{PERF_SAMPLE_ADDR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_PAGE_SIZE});

  const EventAttrs plain = Build({CpuClock()}, SamplingDefaults{});
  EXPECT_FALSE(plain.attrs[0].sample_type & PERF_SAMPLE_ADDR);
  EXPECT_FALSE(plain.attrs[0].mmap_data);
}

TEST(EventAttrsTest, TheFirstEventTracksTheSidebandUnlessSamplingWaits) {
  SamplingDefaults defaults;
  defaults.switch_events = true;
  const EventAttrs first = Build({CpuClock(), Tracepoint()}, defaults);
  ASSERT_EQ(first.specs.size(), 2u);
  EXPECT_FALSE(first.dummy_tracking);
  EXPECT_EQ(first.tracking, 0u);
  const perf_event_attr& a = first.attrs[0];
  EXPECT_TRUE(a.mmap && a.mmap2 && a.comm && a.comm_exec && a.task && a.context_switch);
  EXPECT_FALSE(first.attrs[1].mmap || first.attrs[1].comm || first.attrs[1].task);

  for (bool delayed : {true, false}) {
    SCOPED_TRACE(delayed ? "-D" : "--control");
    SamplingDefaults later;
    later.delayed = delayed;
    later.separate_tracking = !delayed;
    EventSpec user = CpuClock();
    user.attr.exclude_kernel = 1;
    const EventAttrs built = Build({user}, later);
    ASSERT_EQ(built.specs.size(), 2u);
    EXPECT_TRUE(built.dummy_tracking);
    EXPECT_EQ(built.tracking, 1u);
    EXPECT_EQ(built.specs[1].name, "dummy:u");  // the first event's privilege
    const perf_event_attr& dummy = built.attrs[1];
    EXPECT_EQ(dummy.type, uint32_t{PERF_TYPE_SOFTWARE});
    EXPECT_EQ(dummy.config, uint64_t{PERF_COUNT_SW_DUMMY});
    EXPECT_TRUE(dummy.mmap && dummy.mmap2 && dummy.comm && dummy.comm_exec && dummy.task);
    EXPECT_TRUE(dummy.exclude_kernel);
    EXPECT_TRUE(dummy.disabled);
    EXPECT_TRUE(dummy.enable_on_exec);  // on from the exec, whatever sampling does
    EXPECT_FALSE(dummy.freq);
    EXPECT_EQ(dummy.sample_period, 1u);
    EXPECT_FALSE(built.attrs[0].mmap || built.attrs[0].comm);
    EXPECT_EQ(bool(built.attrs[0].enable_on_exec), !delayed);
  }
}

TEST(EventAttrsTest, InheritAndEnableOnExecFollowTheTarget) {
  EventSpec leader = CpuClock(), member = Software("task-clock", PERF_COUNT_SW_TASK_CLOCK);
  leader.group_index = member.group_index = 0;
  leader.group_leader = true;
  const EventAttrs command = Build({leader, member}, SamplingDefaults{});
  EXPECT_TRUE(command.attrs[0].inherit);
  EXPECT_TRUE(command.attrs[0].disabled && command.attrs[0].enable_on_exec);
  EXPECT_TRUE(command.attrs[1].inherit);
  EXPECT_FALSE(command.attrs[1].disabled || command.attrs[1].enable_on_exec);  // follows

  RecordTarget running = Command();
  running.kind = TargetKind::kProcesses;
  running.inherit = false;  // --no-inherit
  const EventAttrs attached = Build({CpuClock()}, SamplingDefaults{}, running);
  EXPECT_FALSE(attached.attrs[0].inherit);
  EXPECT_TRUE(attached.attrs[0].disabled);
  EXPECT_FALSE(attached.attrs[0].enable_on_exec);  // no exec to wait for: EnableAll
}

TEST(EventAttrsTest, RingSizeAndWatermarkComeFromTheHostGiven) {
  SamplingDefaults m;
  m.mmap_pages = 16;
  const EventAttrs given = Build({CpuClock()}, m);
  EXPECT_EQ(given.mmap_pages, 16u);
  EXPECT_TRUE(given.attrs[0].watermark);
  EXPECT_EQ(given.attrs[0].wakeup_watermark, 16u * 4096 / 2);  // half the ring

  const EventAttrs chosen = Build({CpuClock()}, SamplingDefaults{});
  EXPECT_EQ(chosen.mmap_pages, kDefaultRingPages);  // no stack copies: the default

  // A ring that cannot hold two stack copies is refused.
  SamplingDefaults small = WithCallGraph("dwarf,8192");
  small.mmap_pages = 2;
  auto refused = BuildEventAttrs({CpuClock()}, small, Command(), Host());
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("fewer than two samples"));
}

TEST(EventAttrsTest, HugeSamplesKeepTheCpuInTheRing) {
  const EventAttrs huge = Build({CpuClock()}, WithCallGraph("dwarf,65528"));
  EXPECT_FALSE(huge.cpu_field.has_value());
  EXPECT_TRUE(huge.attrs[0].sample_type & PERF_SAMPLE_CPU);
}

TEST(EventAttrsTest, CountingGroupMembersNeverSample) {
  EventSpec leader = CpuClock(), member = Software("task-clock", PERF_COUNT_SW_TASK_CLOCK);
  leader.group_index = member.group_index = 0;
  leader.group_leader = true;
  leader.sample_read = member.sample_read = true;
  const EventAttrs built = Build({leader, member}, SamplingDefaults{});
  EXPECT_TRUE(built.attrs[0].sample_type & PERF_SAMPLE_READ);
  EXPECT_EQ(built.attrs[0].read_format & (PERF_FORMAT_GROUP | PERF_FORMAT_ID),
            uint64_t{PERF_FORMAT_GROUP | PERF_FORMAT_ID});
  EXPECT_FALSE(built.attrs[1].freq);
  EXPECT_EQ(built.attrs[1].sample_period, 0u);
}

}  // namespace
}  // namespace sample::record
