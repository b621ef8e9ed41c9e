// Tests for the -e parser as a whole: modifiers, terms on generic and PMU
// events, PMU format terms and named events, tracepoints, groups, and
// --list-events, each with the exact attr fields it must produce and its
// errors. PMUs and tracepoints are resolved against the fake sysfs and
// tracefs trees of tests/unit/event_spec_fixture.h. Names are tested in
// event_names_test.cc, breakpoints, uprobes and the live kernel in
// event_probe_test.cc.
#include "libsample/events/event_spec.h"

#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/event_spec_fixture.h"

namespace sample {
namespace {

using ::testing::Contains;
using testing::ExpectPlain;
using ::testing::HasSubstr;
using ::testing::Not;

class EventSpecTest : public testing::EventParseTest {};

TEST_F(EventSpecTest, PrivilegeAndPrecisionModifiers) {
  const EventSpec user = Parse("cycles:u");
  EXPECT_EQ(user.name, "cycles:u");
  EXPECT_EQ(user.attr.type, PERF_TYPE_HARDWARE);
  EXPECT_EQ(user.attr.exclude_user, 0u);
  EXPECT_EQ(user.attr.exclude_kernel, 1u);
  EXPECT_EQ(user.attr.exclude_hv, 1u);

  const EventSpec kernel = Parse("cpu-clock:k");
  EXPECT_EQ(kernel.attr.exclude_user, 1u);
  EXPECT_EQ(kernel.attr.exclude_kernel, 0u);
  EXPECT_EQ(kernel.attr.exclude_hv, 1u);

  const EventSpec both = Parse("cycles:uk");
  EXPECT_EQ(both.attr.exclude_user, 0u);
  EXPECT_EQ(both.attr.exclude_kernel, 0u);
  EXPECT_EQ(both.attr.exclude_hv, 1u);

  const EventSpec hv = Parse("cycles:h");
  EXPECT_EQ(hv.attr.exclude_user, 1u);
  EXPECT_EQ(hv.attr.exclude_kernel, 1u);
  EXPECT_EQ(hv.attr.exclude_hv, 0u);

  EXPECT_EQ(Parse("instructions:p").attr.precise_ip, 1u);
  EXPECT_EQ(Parse("instructions:pp").attr.precise_ip, 2u);
  const EventSpec ppp = Parse("instructions:ppp");
  EXPECT_EQ(ppp.attr.precise_ip, 3u);
  EXPECT_EQ(ppp.attr.exclude_kernel, 0u);
  EXPECT_EQ(ppp.name, "instructions:ppp");
  const EventSpec upp = Parse("cs:upp");
  EXPECT_EQ(upp.name, "context-switches:upp");
  EXPECT_EQ(upp.attr.precise_ip, 2u);
  EXPECT_EQ(upp.attr.exclude_kernel, 1u);

  EXPECT_THAT(Error("cycles:pppp"), HasSubstr("at most ppp"));
  const std::string bad = Error("cycles:x");
  EXPECT_THAT(bad, HasSubstr("bad modifier 'x' in 'cycles:x'"));
  EXPECT_THAT(bad, HasSubstr("u (user)"));
  EXPECT_THAT(Error("cycles:uz"), HasSubstr("bad modifier 'z'"));
  EXPECT_THAT(Error("cycles:S"), HasSubstr("applies to groups"));
}

TEST_F(EventSpecTest, ExcludeKernelDefault) {
  options_.exclude_kernel_default = true;
  const EventSpec plain = Parse("cycles");
  EXPECT_EQ(plain.attr.exclude_kernel, 1u);
  EXPECT_EQ(plain.attr.exclude_user, 0u);
  const EventSpec explicit_kernel = Parse("cycles:k");
  EXPECT_EQ(explicit_kernel.attr.exclude_kernel, 0u);
  EXPECT_EQ(explicit_kernel.attr.exclude_user, 1u);
  EXPECT_EQ(Parse("cycles:u").attr.exclude_kernel, 1u);
  EXPECT_EQ(Parse("fakepmu/event=1/").attr.exclude_kernel, 1u);
  // Tracepoints fire in the kernel: excluding it would lose every sample.
  EXPECT_EQ(Parse("sched:sched_switch").attr.exclude_kernel, 0u);
}

TEST_F(EventSpecTest, TermsOnGenericEvents) {
  const EventSpec period = Parse("cpu-clock/period=100000/");
  EXPECT_EQ(period.attr.type, PERF_TYPE_SOFTWARE);
  EXPECT_EQ(period.attr.config, PERF_COUNT_SW_CPU_CLOCK);
  EXPECT_EQ(period.attr.sample_period, 100000u);
  EXPECT_EQ(period.attr.freq, 0u);
  EXPECT_TRUE(period.period_given);
  EXPECT_FALSE(period.freq_given);
  EXPECT_FALSE(period.chain_capture);
  EXPECT_EQ(period.name, "cpu-clock/period=100000/");

  const EventSpec freq = Parse("task-clock/freq=999,call-graph=fp/");
  EXPECT_EQ(freq.attr.config, PERF_COUNT_SW_TASK_CLOCK);
  EXPECT_EQ(freq.attr.freq, 1u);
  EXPECT_EQ(freq.attr.sample_freq, 999u);
  EXPECT_TRUE(freq.freq_given);
  EXPECT_FALSE(freq.period_given);
  EXPECT_EQ(freq.chain_capture, ChainCapture::kFramePointer);

  const EventSpec cycles = Parse("cpu-cycles/period=0x10,call-graph=dwarf/:u");
  EXPECT_EQ(cycles.name, "cycles/period=0x10,call-graph=dwarf/:u");
  EXPECT_EQ(cycles.attr.type, PERF_TYPE_HARDWARE);
  EXPECT_EQ(cycles.attr.sample_period, 16u);
  EXPECT_EQ(cycles.chain_capture, ChainCapture::kDwarf);
  EXPECT_EQ(cycles.attr.exclude_kernel, 1u);
  // perf also takes modifiers right after the closing slash.
  EXPECT_EQ(Parse("cycles/period=7/k").attr.exclude_user, 1u);

  EXPECT_EQ(Parse("cycles/call-graph=no/").chain_capture, ChainCapture::kNone);
  EXPECT_EQ(Parse("cycles/name=mine/").name, "mine");
  EXPECT_EQ(Parse("sched:sched_switch/period=1/").attr.sample_period, 1u);
  EXPECT_EQ(Parse("L1-dcache-loads/period=5/").attr.sample_period, 5u);

  const std::string unknown = Error("cpu-clock/foo=1/");
  EXPECT_THAT(unknown, HasSubstr("unknown term 'foo' in 'cpu-clock/foo=1/'"));
  EXPECT_THAT(unknown, HasSubstr("period, freq, call-graph, stack-size, name"));
  EXPECT_THAT(Error("cycles/config=3/"), HasSubstr("unknown term 'config'"));
  EXPECT_THAT(Error("cpu-clock/period=1,freq=2/"), HasSubstr("period or freq, not both"));
  EXPECT_THAT(Error("cycles/call-graph=lbr/"), HasSubstr("fp, dwarf or no"));
  EXPECT_THAT(Error("cycles/period=abc/"), HasSubstr("not a number"));
  EXPECT_THAT(Error("cycles/period/"), HasSubstr("needs a value"));
  EXPECT_THAT(Error("cycles/period=0/"), HasSubstr("at least 1"));
  // The kernel refuses the top bit; say so before it does, with the bound.
  EXPECT_THAT(Error("cycles/period=0x8000000000000000/"),
              HasSubstr("period=9223372036854775808: at most 9223372036854775807"));
  EXPECT_TRUE(ParseEventList("cycles/period=0x7fffffffffffffff/", {}));
  EXPECT_THAT(Error("cycles/period=1"), HasSubstr("no closing '/'"));
  EXPECT_THAT(Error("cycles/period=1,,freq=2/"), HasSubstr("empty term"));
  EXPECT_THAT(Error("cycles:u/period=1/k"), HasSubstr("two modifier lists"));
}

// perf's stack-size=N: bytes of user stack per sample for dwarf call
// graphs, rounded up to a multiple of 8 as the kernel requires.
TEST_F(EventSpecTest, StackSizeTerm) {
  const EventSpec dwarf = Parse("cpu-clock/call-graph=dwarf,stack-size=4096/");
  EXPECT_EQ(dwarf.chain_capture, ChainCapture::kDwarf);
  EXPECT_EQ(dwarf.stack_size, 4096u);
  EXPECT_EQ(dwarf.name, "cpu-clock/call-graph=dwarf,stack-size=4096/");
  // Alone it changes the recording's size (checked when the events open).
  const EventSpec alone = Parse("cpu-clock/stack-size=1001/");
  EXPECT_FALSE(alone.chain_capture);
  EXPECT_EQ(alone.stack_size, 1008u);
  EXPECT_EQ(Parse("cpu-clock/stack-size=0x100/").stack_size, 256u);
  EXPECT_EQ(Parse("cpu-clock/stack-size=65528/").stack_size, 65528u);
  EXPECT_FALSE(Parse("cpu-clock/period=3/").stack_size);

  EXPECT_THAT(Error("cpu-clock/stack-size=0/"),
              HasSubstr("'cpu-clock/stack-size=0/': stack size 0: must be at least 1 byte"));
  EXPECT_THAT(Error("cpu-clock/stack-size=65529/"), HasSubstr("at most 65528 bytes"));
  EXPECT_THAT(Error("cpu-clock/stack-size=big/"), HasSubstr("term 'stack-size'"));
  EXPECT_THAT(Error("cpu-clock/stack-size/"), HasSubstr("needs a value"));
}

TEST_F(EventSpecTest, PmuFormatTerms) {
  const EventSpec spec = Parse("fakepmu/event=0x3c,umask=0x1,edge/");
  EXPECT_EQ(spec.name, "fakepmu/event=0x3c,umask=0x1,edge/");
  EXPECT_EQ(spec.attr.type, 42u);
  EXPECT_EQ(spec.attr.config, 0x3cu | 0x100u | (uint64_t{1} << 18));
  EXPECT_EQ(spec.attr.config1, 0u);
  EXPECT_EQ(spec.attr.config2, 0u);
  ExpectPlain(spec);

  const EventSpec other_fields = Parse("fakepmu/event=1,ldlat=3,split=0xab/");
  EXPECT_EQ(other_fields.attr.config, 1u);
  EXPECT_EQ(other_fields.attr.config1, 3u);
  EXPECT_EQ(other_fields.attr.config2, (uint64_t{0xa} << 32) | 0xb);

  const EventSpec generic = Parse("fakepmu/config=0x1234,config1=5,config2=6,period=1000/:u");
  EXPECT_EQ(generic.attr.config, 0x1234u);
  EXPECT_EQ(generic.attr.config1, 5u);
  EXPECT_EQ(generic.attr.config2, 6u);
  EXPECT_EQ(generic.attr.sample_period, 1000u);
  EXPECT_TRUE(generic.period_given);
  EXPECT_EQ(generic.attr.exclude_kernel, 1u);
  // Terms apply in order: a later format term overrides its bits.
  EXPECT_EQ(Parse("fakepmu/config=0xffff,event=0x12/").attr.config, 0xff12u);

  const EventSpec empty = Parse("fakepmu//");
  EXPECT_EQ(empty.attr.type, 42u);
  EXPECT_EQ(empty.attr.config, 0u);
}

TEST_F(EventSpecTest, PmuNamedEvents) {
  const EventSpec misses = Parse("fakepmu/cache-misses/");
  EXPECT_EQ(misses.attr.type, 42u);
  EXPECT_EQ(misses.attr.config, 0x412eu);
  EXPECT_EQ(misses.name, "fakepmu/cache-misses/");
  EXPECT_EQ(Parse("fakepmu/cache-misses,umask=0x2/").attr.config, 0x022eu);
  EXPECT_EQ(Parse("fakepmu/cycles/").attr.config, 0x3cu);
  // The generic event wins over a PMU event of the same name.
  EXPECT_EQ(Parse("cycles").attr.type, PERF_TYPE_HARDWARE);

  EXPECT_THAT(Error("fakepmu/needs-umask/"), HasSubstr("needs a value for term 'umask'"));
  EXPECT_EQ(Parse("fakepmu/needs-umask,umask=3/").attr.config, 0x310u);

  // An event of exactly one PMU may be named without the PMU.
  const EventSpec only = Parse("only-here:u");
  EXPECT_EQ(only.attr.type, 50u);
  EXPECT_EQ(only.attr.config, 0x77u);
  EXPECT_EQ(only.attr.exclude_kernel, 1u);
}

TEST_F(EventSpecTest, PmuErrors) {
  const std::string unknown = Error("fakepmu/evnt=1/");
  EXPECT_THAT(unknown, HasSubstr("unknown term 'evnt' in 'fakepmu/evnt=1/'"));
  EXPECT_THAT(unknown, HasSubstr("edge, event, ldlat, split, umask"));
  EXPECT_THAT(unknown, HasSubstr("config1"));
  EXPECT_THAT(unknown, HasSubstr("cache-misses"));
  EXPECT_THAT(Error("fakepmu/event=0x100/"), HasSubstr("does not fit term 'event'"));
  EXPECT_THAT(Error("fakepmu/event=zz/"), HasSubstr("term 'event'"));
  EXPECT_THAT(Error("fakepmu/future=1/"), HasSubstr("config3"));
  EXPECT_THAT(Error("fakepmu"), HasSubstr("'fakepmu' is a PMU"));
  const std::string missing = Error("nopmu/event=1/");
  EXPECT_THAT(missing, HasSubstr("unknown event 'nopmu'"));
  EXPECT_THAT(missing, HasSubstr("nor a PMU in " + options_.sysfs_root));
  EXPECT_THAT(Error("fakepmus/event=1/"), HasSubstr("did you mean: fakepmu//"));
}

TEST_F(EventSpecTest, Tracepoints) {
  const EventSpec spec = Parse("sched:sched_switch");
  EXPECT_EQ(spec.name, "sched:sched_switch");
  EXPECT_EQ(spec.attr.type, PERF_TYPE_TRACEPOINT);
  EXPECT_EQ(spec.attr.config, 316u);
  ExpectPlain(spec);

  const EventSpec kernel = Parse("sched:sched_switch:k");
  EXPECT_EQ(kernel.attr.config, 316u);
  EXPECT_EQ(kernel.attr.exclude_user, 1u);
  EXPECT_EQ(kernel.attr.exclude_kernel, 0u);
  EXPECT_EQ(Parse("syscalls:sys_enter_openat").attr.config, 600u);

  const std::string typo = Error("sched:sched_swich");
  EXPECT_THAT(typo, HasSubstr("no tracepoint 'sched:sched_swich'"));
  EXPECT_THAT(typo, HasSubstr("did you mean: sched:sched_switch"));
  EXPECT_THAT(Error("nosuch:event"), HasSubstr("no tracepoint subsystem 'nosuch'"));
  // Not a tracepoint, and the part after ':' reads as modifiers: a typo of
  // an event name.
  const std::string cyclse = Error("cyclse:u");
  EXPECT_THAT(cyclse, HasSubstr("unknown event 'cyclse'"));
  EXPECT_THAT(cyclse, HasSubstr("cycles"));
  EXPECT_THAT(Error("sched:*"), HasSubstr("no globs"));
  EXPECT_THAT(Error("sched:../../x"), HasSubstr("not a tracepoint name"));
  EXPECT_THAT(Error("a:b:c:d"), HasSubstr("too many ':'"));

  options_.tracefs_root = (trees_.root() / "no-tracefs").string();
  EXPECT_THAT(Error("sched:sched_switch"), HasSubstr("no events/ directory"));
}

TEST_F(EventSpecTest, Groups) {
  const std::vector<EventSpec> specs = ParseAll("cpu-clock,{cycles,instructions}:S,page-faults");
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].name, "cpu-clock");
  EXPECT_EQ(specs[0].group_index, -1);
  EXPECT_FALSE(specs[0].sample_read);
  EXPECT_EQ(specs[1].name, "cycles");
  EXPECT_EQ(specs[1].group_index, 0);
  EXPECT_TRUE(specs[1].group_leader);
  EXPECT_TRUE(specs[1].sample_read);
  EXPECT_EQ(specs[2].name, "instructions");
  EXPECT_EQ(specs[2].attr.config, PERF_COUNT_HW_INSTRUCTIONS);
  EXPECT_EQ(specs[2].group_index, 0);
  EXPECT_FALSE(specs[2].group_leader);
  EXPECT_TRUE(specs[2].sample_read);
  EXPECT_EQ(specs[3].name, "page-faults");
  EXPECT_EQ(specs[3].group_index, -1);
  for (const EventSpec& spec : specs) EXPECT_EQ(spec.attr.exclude_kernel, 0u) << spec.name;

  const std::vector<EventSpec> two = ParseAll("{cycles:p,instructions},{cpu-clock,task-clock:k}:u");
  ASSERT_EQ(two.size(), 4u);
  EXPECT_EQ(two[0].group_index, 0);
  EXPECT_EQ(two[0].attr.precise_ip, 1u);
  EXPECT_EQ(two[1].group_index, 0);
  EXPECT_FALSE(two[1].sample_read);
  EXPECT_EQ(two[1].attr.exclude_kernel, 0u);
  EXPECT_EQ(two[2].group_index, 1);
  EXPECT_TRUE(two[2].group_leader);
  // Group modifiers apply to every member, on top of the member's own.
  EXPECT_EQ(two[2].attr.exclude_kernel, 1u);
  EXPECT_EQ(two[2].attr.exclude_user, 0u);
  EXPECT_EQ(two[3].attr.exclude_kernel, 0u);
  EXPECT_EQ(two[3].attr.exclude_user, 0u);
  EXPECT_EQ(two[3].attr.exclude_hv, 1u);

  const std::vector<EventSpec> mixed =
      ParseAll("{fakepmu/event=1,umask=2/,sched:sched_switch,mem:0x10:w}");
  ASSERT_EQ(mixed.size(), 3u);
  EXPECT_EQ(mixed[0].attr.config, 0x201u);
  EXPECT_EQ(mixed[1].attr.type, PERF_TYPE_TRACEPOINT);
  EXPECT_EQ(mixed[2].attr.type, PERF_TYPE_BREAKPOINT);
  for (const EventSpec& spec : mixed) EXPECT_EQ(spec.group_index, 0);

  EXPECT_THAT(Error("{cycles,instructions"), HasSubstr("unbalanced braces: the '{' at offset 0"));
  EXPECT_THAT(Error("cycles}"), HasSubstr("unbalanced braces: the '}' at offset 6"));
  EXPECT_THAT(Error("{cycles,{instructions}}"), HasSubstr("cannot nest"));
  EXPECT_THAT(Error("{}"), HasSubstr("empty event"));
  EXPECT_THAT(Error("cycles,"), HasSubstr("ends with a comma"));
  EXPECT_THAT(Error(",cycles"), HasSubstr("empty event at offset 0"));
  EXPECT_THAT(Error(""), HasSubstr("empty event list"));
  EXPECT_THAT(Error("{cycles}x"), HasSubstr("unexpected 'x' after '}'"));
  EXPECT_THAT(Error("cs,{cycles}:Q"), HasSubstr("bad modifier 'Q' in '{cycles}:Q'"));
  EXPECT_THAT(Error("cycles{"), HasSubstr("unexpected '{'"));
}

TEST_F(EventSpecTest, ListEvents) {
  auto names = ListEvents(options_, "");
  ASSERT_TRUE(names) << names.error().message;
  EXPECT_THAT(*names, Contains("cpu-clock"));
  EXPECT_THAT(*names, Contains("cycles"));
  EXPECT_THAT(*names, Contains("stalled-cycles-backend"));
  EXPECT_THAT(*names, Not(Contains("cpu-cycles")));  // aliases are not listed
  EXPECT_THAT(*names, Contains("L1-dcache-load-misses"));
  EXPECT_THAT(*names, Contains("L1-dcache-prefetches"));
  EXPECT_THAT(*names, Not(Contains("L1-icache-stores")));  // perf does not list it
  EXPECT_THAT(*names, Contains("fakepmu//"));
  EXPECT_THAT(*names, Contains("fakepmu/cache-misses/"));
  EXPECT_THAT(*names, Not(Contains("fakepmu/cache-misses.scale/")));
  EXPECT_THAT(*names, Not(Contains("sched:sched_switch")));

  auto sched = ListEvents(options_, "sched:*");
  ASSERT_TRUE(sched) << sched.error().message;
  EXPECT_THAT(*sched, Contains("sched:sched_switch"));
  EXPECT_THAT(*sched, Contains("sched:sched_wakeup"));
  EXPECT_THAT(*sched, Not(Contains("syscalls:sys_enter_openat")));
  // Everything listed parses back, but for the event that needs a value.
  for (const std::string& name : *sched) {
    if (name != "fakepmu/needs-umask/") {
      EXPECT_TRUE(ParseEventList(name, options_)) << name;
    }
  }
}

// PMUs whose events need what no term can give (a tracepoint id, an
// address, a path) are not listed as "pmu//", which the kernel refuses
// (EINVAL): their own syntax is listed instead, for the kinds this kernel
// has.
TEST_F(EventSpecTest, ListEventsShowsProbeSyntaxNotBarePmus) {
  trees_.Write("sys/bus/event_source/devices/tracepoint/type", "2\n");
  trees_.Write("sys/bus/event_source/devices/breakpoint/type", "5\n");
  trees_.Write("sys/bus/event_source/devices/kprobe/type", "8\n");
  trees_.Write("sys/bus/event_source/devices/kprobe/format/retprobe", "config:0\n");
  trees_.Write("sys/bus/event_source/devices/software/type", "1\n");
  auto names = ListEvents(options_, "");
  ASSERT_TRUE(names) << names.error().message;
  for (const char* bare : {"tracepoint//", "breakpoint//", "uprobe//", "kprobe//"}) {
    EXPECT_THAT(*names, Not(Contains(bare)));
  }
  EXPECT_THAT(*names, Contains("fakepmu//"));
  EXPECT_THAT(*names, Contains("software//"));  // opens: cpu-clock

  std::vector<std::string> forms;
  for (const EventForm& form : ParametrizedEventForms(options_)) {
    forms.push_back(form.syntax);
    EXPECT_FALSE(form.description.empty()) << form.syntax;
  }
  EXPECT_THAT(forms, ::testing::ElementsAre("SUBSYSTEM:EVENT", "mem:ADDR[/LEN][:rwx]",
                                            "uprobe:PATH:SYMBOL[+OFFSET]", "uretprobe:PATH:SYMBOL",
                                            "kprobe:FUNCTION[+OFFSET]", "kretprobe:FUNCTION"));

  // Only the kinds whose PMU this kernel has.
  std::filesystem::remove_all(trees_.root() / "sys/bus/event_source/devices/breakpoint");
  std::filesystem::remove_all(trees_.root() / "sys/bus/event_source/devices/uprobe");
  std::filesystem::remove_all(trees_.root() / "sys/bus/event_source/devices/kprobe");
  forms.clear();
  for (const EventForm& form : ParametrizedEventForms(options_)) forms.push_back(form.syntax);
  EXPECT_THAT(forms, ::testing::ElementsAre("SUBSYSTEM:EVENT"));
}

}  // namespace
}  // namespace sample
