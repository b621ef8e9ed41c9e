// Tests for the -e parser: every syntax with the exact attr fields it must
// produce, and its errors. PMUs, uprobes and tracepoints are resolved
// against fake sysfs and tracefs trees in a temporary directory; uprobe
// offsets are checked against the fixture program read with <elf.h>
// (tests/fixtures/raw_elf.h), not through the code under test. The live
// tests at the end ask the running kernel to accept what the parser built.
#include "libsample/event_spec.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/elf_symbols.h"
#include "tests/fixtures/raw_elf.h"

namespace sample {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

const char* const kProg = FIXTURE_PROG_PATH;

// A fake sysfs and tracefs in a temporary directory, removed at the end:
//   fakepmu (type 42): formats event, umask, edge, ldlat (config1), split
//     (config2, two ranges), future (config3: unusable); events cycles,
//     cache-misses, needs-umask (umask=?)
//   other (type 50): event only-here
//   uprobe (type 7): format retprobe = config:0
//   tracefs: sched:sched_switch (316), sched:sched_wakeup (317),
//     syscalls:sys_enter_openat (600)
class FakeTrees {
 public:
  FakeTrees() {
    std::string pattern = (fs::temp_directory_path() / "event_spec_test.XXXXXX").string();
    root_ = mkdtemp(pattern.data());
    const fs::path pmu = "sys/bus/event_source/devices/fakepmu";
    Write(pmu / "type", "42\n");
    Write(pmu / "format/event", "config:0-7\n");
    Write(pmu / "format/umask", "config:8-15\n");
    Write(pmu / "format/edge", "config:18\n");
    Write(pmu / "format/ldlat", "config1:0-15\n");
    Write(pmu / "format/split", "config2:0-3,32-35\n");
    Write(pmu / "format/future", "config3:0-7\n");
    Write(pmu / "events/cycles", "event=0x3c\n");
    Write(pmu / "events/cache-misses", "event=0x2e,umask=0x41\n");
    Write(pmu / "events/cache-misses.scale", "1\n");
    Write(pmu / "events/needs-umask", "event=0x10,umask=?\n");
    Write("sys/bus/event_source/devices/other/type", "50\n");
    Write("sys/bus/event_source/devices/other/events/only-here", "config=0x77\n");
    Write("sys/bus/event_source/devices/uprobe/type", "7\n");
    Write("sys/bus/event_source/devices/uprobe/format/retprobe", "config:0\n");
    Write("tracing/events/sched/sched_switch/id", "316\n");
    Write("tracing/events/sched/sched_wakeup/id", "317\n");
    Write("tracing/events/syscalls/sys_enter_openat/id", "600\n");
    options_.sysfs_root = (root_ / "sys").string();
    options_.tracefs_root = (root_ / "tracing").string();
  }
  ~FakeTrees() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void Write(const fs::path& relative, std::string_view text) const {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  const fs::path& root() const { return root_; }
  const EventParseOptions& options() const { return options_; }

 private:
  fs::path root_;
  EventParseOptions options_;
};

class EventSpecTest : public ::testing::Test {
 protected:
  // Parses a list that must succeed.
  std::vector<EventSpec> ParseAll(std::string_view text) {
    auto specs = ParseEventList(text, options_);
    EXPECT_TRUE(specs) << text << ": " << specs.error().message;
    return specs ? *specs : std::vector<EventSpec>();
  }
  // Parses one event that must succeed.
  EventSpec Parse(std::string_view text) {
    std::vector<EventSpec> specs = ParseAll(text);
    EXPECT_EQ(specs.size(), 1u) << text;
    return specs.empty() ? EventSpec() : specs[0];
  }
  // Parses a list that must fail; returns the message.
  std::string Error(std::string_view text) {
    auto specs = ParseEventList(text, options_);
    EXPECT_FALSE(specs) << text << " parsed";
    return specs ? std::string() : specs.error().message;
  }

  FakeTrees trees_;
  EventParseOptions options_ = trees_.options();
};

// The fields the parser must leave alone when no modifier or term asks.
void ExpectPlain(const EventSpec& spec) {
  EXPECT_EQ(spec.attr.exclude_user, 0u) << spec.name;
  EXPECT_EQ(spec.attr.exclude_kernel, 0u) << spec.name;
  EXPECT_EQ(spec.attr.exclude_hv, 0u) << spec.name;
  EXPECT_EQ(spec.attr.precise_ip, 0u) << spec.name;
  EXPECT_EQ(spec.attr.sample_period, 0u) << spec.name;
  EXPECT_EQ(spec.attr.freq, 0u) << spec.name;
  EXPECT_EQ(spec.attr.size, 0u) << spec.name;
  EXPECT_EQ(spec.attr.sample_type, 0u) << spec.name;
  EXPECT_FALSE(spec.period_given);
  EXPECT_FALSE(spec.freq_given);
  EXPECT_FALSE(spec.call_graph);
  EXPECT_EQ(spec.group_index, -1);
  EXPECT_FALSE(spec.group_leader);
  EXPECT_FALSE(spec.sample_read);
  EXPECT_TRUE(spec.uprobe_path.empty());
}

struct NamedCase {
  const char* text;
  uint32_t type;
  uint64_t config;
  const char* name;
};

TEST_F(EventSpecTest, GenericEventsAndAliases) {
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

TEST_F(EventSpecTest, HardwareCacheEvents) {
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

TEST_F(EventSpecTest, RawEvents) {
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
  EXPECT_FALSE(period.call_graph);
  EXPECT_EQ(period.name, "cpu-clock/period=100000/");

  const EventSpec freq = Parse("task-clock/freq=999,call-graph=fp/");
  EXPECT_EQ(freq.attr.config, PERF_COUNT_SW_TASK_CLOCK);
  EXPECT_EQ(freq.attr.freq, 1u);
  EXPECT_EQ(freq.attr.sample_freq, 999u);
  EXPECT_TRUE(freq.freq_given);
  EXPECT_FALSE(freq.period_given);
  EXPECT_EQ(freq.call_graph, CallGraphMode::kFramePointer);

  const EventSpec cycles = Parse("cpu-cycles/period=0x10,call-graph=dwarf/:u");
  EXPECT_EQ(cycles.name, "cycles/period=0x10,call-graph=dwarf/:u");
  EXPECT_EQ(cycles.attr.type, PERF_TYPE_HARDWARE);
  EXPECT_EQ(cycles.attr.sample_period, 16u);
  EXPECT_EQ(cycles.call_graph, CallGraphMode::kDwarf);
  EXPECT_EQ(cycles.attr.exclude_kernel, 1u);
  // perf also takes modifiers right after the closing slash.
  EXPECT_EQ(Parse("cycles/period=7/k").attr.exclude_user, 1u);

  EXPECT_EQ(Parse("cycles/call-graph=no/").call_graph, CallGraphMode::kNone);
  EXPECT_EQ(Parse("cycles/name=mine/").name, "mine");
  EXPECT_EQ(Parse("sched:sched_switch/period=1/").attr.sample_period, 1u);
  EXPECT_EQ(Parse("L1-dcache-loads/period=5/").attr.sample_period, 5u);

  const std::string unknown = Error("cpu-clock/foo=1/");
  EXPECT_THAT(unknown, HasSubstr("unknown term 'foo' in 'cpu-clock/foo=1/'"));
  EXPECT_THAT(unknown, HasSubstr("period, freq, call-graph, name"));
  EXPECT_THAT(Error("cycles/config=3/"), HasSubstr("unknown term 'config'"));
  EXPECT_THAT(Error("cpu-clock/period=1,freq=2/"), HasSubstr("period or freq, not both"));
  EXPECT_THAT(Error("cycles/call-graph=lbr/"), HasSubstr("fp, dwarf or no"));
  EXPECT_THAT(Error("cycles/period=abc/"), HasSubstr("not a number"));
  EXPECT_THAT(Error("cycles/period/"), HasSubstr("needs a value"));
  EXPECT_THAT(Error("cycles/period=0/"), HasSubstr("at least 1"));
  EXPECT_THAT(Error("cycles/period=1"), HasSubstr("no closing '/'"));
  EXPECT_THAT(Error("cycles/period=1,,freq=2/"), HasSubstr("empty term"));
  EXPECT_THAT(Error("cycles:u/period=1/k"), HasSubstr("two modifier lists"));
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

TEST_F(EventSpecTest, Breakpoints) {
  const EventSpec rw = Parse("mem:0x1000");
  EXPECT_EQ(rw.name, "mem:0x1000");
  EXPECT_EQ(rw.attr.type, PERF_TYPE_BREAKPOINT);
  EXPECT_EQ(rw.attr.config, 0u);
  EXPECT_EQ(rw.attr.bp_addr, 0x1000u);
  EXPECT_EQ(rw.attr.bp_len, 4u);
  EXPECT_EQ(rw.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_RW));
  ExpectPlain(rw);

  const EventSpec w = Parse("mem:0x1000/8:w");
  EXPECT_EQ(w.attr.bp_addr, 0x1000u);
  EXPECT_EQ(w.attr.bp_len, 8u);
  EXPECT_EQ(w.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_W));

  const EventSpec x = Parse("mem:4198400:x");
  EXPECT_EQ(x.attr.bp_addr, 4198400u);
  EXPECT_EQ(x.attr.bp_len, sizeof(long));
  EXPECT_EQ(x.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_X));

  const EventSpec r = Parse("mem:0x10/2:r:u");
  EXPECT_EQ(r.attr.bp_len, 2u);
  EXPECT_EQ(r.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_R));
  EXPECT_EQ(r.attr.exclude_kernel, 1u);
  const EventSpec rw_k = Parse("mem:0x10:k");
  EXPECT_EQ(rw_k.attr.bp_type, static_cast<uint32_t>(HW_BREAKPOINT_RW));
  EXPECT_EQ(rw_k.attr.exclude_user, 1u);

  const std::vector<EventSpec> list = ParseAll("mem:0x10:w,cycles");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].attr.type, PERF_TYPE_HARDWARE);

  EXPECT_THAT(Error("mem:zz"), HasSubstr("bad breakpoint address 'zz' in 'mem:zz'"));
  EXPECT_THAT(Error("mem:"), HasSubstr("bad breakpoint address ''"));
  EXPECT_THAT(Error("mem:0x10/3"), HasSubstr("must be 1, 2, 4 or 8"));
  EXPECT_THAT(Error("mem:0x10:rx"), HasSubstr("x cannot be combined"));
  EXPECT_THAT(Error("mem:0x10:rr"), HasSubstr("given twice"));
  EXPECT_THAT(Error("mem:0x10:q"), HasSubstr("bad modifier 'q'"));
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

TEST_F(EventSpecTest, UnknownEventsSuggestCloseNames) {
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
  EXPECT_THAT(*names, Contains("uprobe//"));
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

// st_value of the function `name` in the .symtab of an ELF64 file, read with
// <elf.h> structs.
std::optional<uint64_t> RawFunctionAddress(const std::string& path, std::string_view name) {
  const std::vector<char> bytes = fixtures::ReadWholeFile(path);
  Elf64_Ehdr ehdr;
  if (!fixtures::ReadAt(bytes, 0, &ehdr)) return std::nullopt;
  for (size_t i = 0; i < ehdr.e_shnum; ++i) {
    Elf64_Shdr symtab;
    Elf64_Shdr strtab;
    if (!fixtures::ReadAt(bytes, ehdr.e_shoff + i * ehdr.e_shentsize, &symtab) ||
        symtab.sh_type != SHT_SYMTAB ||
        !fixtures::ReadAt(bytes, ehdr.e_shoff + symtab.sh_link * ehdr.e_shentsize, &strtab)) {
      continue;
    }
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= symtab.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      if (!fixtures::ReadAt(bytes, symtab.sh_offset + at, &sym)) break;
      const uint64_t name_at = strtab.sh_offset + sym.st_name;
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || name_at >= bytes.size()) continue;
      if (std::string_view(bytes.data() + name_at,
                           strnlen(bytes.data() + name_at, bytes.size() - name_at)) == name) {
        return sym.st_value;
      }
    }
  }
  return std::nullopt;
}

// The file offset of `vaddr`, from the PT_LOAD program headers.
std::optional<uint64_t> RawFileOffset(const std::string& path, uint64_t vaddr) {
  for (const fixtures::RawLoad& load : fixtures::ReadRawElf(path).loads) {
    if (vaddr >= load.vaddr && vaddr - load.vaddr < load.filesz) {
      return load.offset + (vaddr - load.vaddr);
    }
  }
  return std::nullopt;
}

// The file offset a uprobe on function `mangled` of the fixture must use.
uint64_t ExpectedProbeOffset(std::string_view mangled) {
  const std::optional<uint64_t> vaddr = RawFunctionAddress(kProg, mangled);
  EXPECT_TRUE(vaddr) << mangled;
  const std::optional<uint64_t> offset = RawFileOffset(kProg, vaddr.value_or(0));
  EXPECT_TRUE(offset) << mangled;
  return offset.value_or(0);
}

TEST(ElfSymbolsVaddrToFileOffsetTest, InvertsFileOffsetToVaddr) {
  auto elf = ElfSymbols::Load(kProg);
  ASSERT_TRUE(elf) << elf.error().message;
  const fixtures::RawElf raw = fixtures::ReadRawElf(kProg);
  bool saw_shifted = false;
  for (const fixtures::RawLoad& load : raw.loads) {
    if (load.filesz == 0) continue;
    saw_shifted |= load.vaddr != load.offset;
    EXPECT_EQ(elf->VaddrToFileOffset(load.vaddr), load.offset);
    EXPECT_EQ(elf->VaddrToFileOffset(load.vaddr + load.filesz - 1), load.offset + load.filesz - 1);
    EXPECT_EQ(elf->FileOffsetToVaddr(*elf->VaddrToFileOffset(load.vaddr + 1)), load.vaddr + 1);
  }
  // Without a shifted segment the test could not tell vaddr from offset.
  EXPECT_TRUE(saw_shifted);
  EXPECT_EQ(elf->VaddrToFileOffset(~uint64_t{0}), std::nullopt);
  // Memory past a segment's file contents (.bss) has no file offset.
  for (const fixtures::RawLoad& load : raw.loads) {
    if (load.memsz > load.filesz && !RawFileOffset(kProg, load.vaddr + load.filesz)) {
      EXPECT_EQ(elf->VaddrToFileOffset(load.vaddr + load.filesz), std::nullopt);
    }
  }
}

class EventSpecUprobeTest : public EventSpecTest {
 protected:
  std::string prog_ = kProg;
  std::string canonical_ = fs::canonical(kProg).string();
};

TEST_F(EventSpecUprobeTest, ProbeOnMain) {
  const uint64_t main_offset = ExpectedProbeOffset("main");
  const EventSpec spec = Parse("uprobe:" + prog_ + ":main");
  EXPECT_EQ(spec.name, "uprobe:" + prog_ + ":main");
  EXPECT_EQ(spec.attr.type, 7u);
  EXPECT_EQ(spec.attr.config, 0u);
  EXPECT_EQ(spec.attr.config1, 0u);  // the recorder points it at uprobe_path
  EXPECT_EQ(spec.attr.config2, main_offset);
  EXPECT_EQ(spec.uprobe_path, canonical_);
  EXPECT_EQ(spec.attr.exclude_kernel, 0u);
  EXPECT_EQ(spec.group_index, -1);

  const EventSpec ret = Parse("uretprobe:" + prog_ + ":main+4");
  EXPECT_EQ(ret.attr.type, 7u);
  EXPECT_EQ(ret.attr.config, 1u);  // format/retprobe is config:0
  EXPECT_EQ(ret.attr.config2, main_offset + 4);

  const std::optional<uint64_t> main_vaddr = RawFunctionAddress(kProg, "main");
  ASSERT_TRUE(main_vaddr);
  EXPECT_EQ(Parse(fmt::format("uprobe:{}:{:#x}", prog_, *main_vaddr)).attr.config2, main_offset);

  const EventSpec user = Parse("uprobe:" + prog_ + ":main+0x2:u");
  EXPECT_EQ(user.attr.config2, main_offset + 2);
  EXPECT_EQ(user.attr.exclude_kernel, 1u);
  EXPECT_EQ(user.attr.exclude_user, 0u);
}

TEST_F(EventSpecUprobeTest, CxxNamesAndLists) {
  // Demangled, with or without the parameter list.
  const uint64_t bar = ExpectedProbeOffset("_ZN2ns3Foo3barEi");
  EXPECT_EQ(Parse("uprobe:" + prog_ + ":ns::Foo::bar").attr.config2, bar);
  EXPECT_EQ(Parse("uprobe:" + prog_ + ":ns::Foo::bar(int)").attr.config2, bar);

  const std::vector<EventSpec> list =
      ParseAll("cycles,{uprobe:" + prog_ + ":main,uretprobe:" + prog_ + ":main}:S");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[1].group_index, 0);
  EXPECT_TRUE(list[1].group_leader);
  EXPECT_TRUE(list[1].sample_read);
  EXPECT_EQ(list[2].attr.config, 1u);
  EXPECT_EQ(list[2].uprobe_path, canonical_);
}

TEST_F(EventSpecUprobeTest, Errors) {
  EXPECT_THAT(Error("uprobe:/nonexistent/prog:main"), HasSubstr("cannot find /nonexistent/prog"));
  const std::string typo = Error("uprobe:" + prog_ + ":mian");
  EXPECT_THAT(typo, HasSubstr("no function 'mian' in " + canonical_));
  EXPECT_THAT(typo, HasSubstr("did you mean: main"));
  EXPECT_THAT(Error("uprobe:" + prog_), HasSubstr("expected uprobe:PATH:SYMBOL[+OFFSET]"));
  EXPECT_THAT(Error("uprobe:" + prog_ + ":"), HasSubstr("no symbol"));
  EXPECT_THAT(Error("uprobe:" + prog_ + ":main+0x100000"), HasSubstr("past the end of main"));

  options_.sysfs_root = (trees_.root() / "empty-sys").string();
  const std::string no_pmu = Error("uprobe:" + prog_ + ":main");
  EXPECT_THAT(no_pmu, HasSubstr("no PMU 'uprobe'"));
  EXPECT_THAT(no_pmu, HasSubstr("4.17"));

  trees_.Write("old-sys/bus/event_source/devices/uprobe/type", "7\n");
  options_.sysfs_root = (trees_.root() / "old-sys").string();
  EXPECT_EQ(Parse("uprobe:" + prog_ + ":main").attr.type, 7u);
  EXPECT_THAT(Error("uretprobe:" + prog_ + ":main"), HasSubstr("no format/retprobe"));
}

int PerfEventOpen(perf_event_attr* attr, pid_t pid, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

// Runs the fixture under a counting event opened from `spec` (enabled at
// exec) and returns the count, or nullopt with `skip` set when the kernel
// refuses for lack of privilege.
std::optional<uint64_t> CountInFixture(const EventSpec& spec, std::string* skip) {
  perf_event_attr attr = spec.attr;
  attr.size = sizeof(attr);
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  if (!spec.uprobe_path.empty())
    attr.config1 = reinterpret_cast<uint64_t>(spec.uprobe_path.c_str());
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t child = fork();
  if (child == 0) {
    char c;
    if (read(go[0], &c, 1) == 1) {
      char quiet[] = "FIXTURE_QUIET=1";
      char* env[] = {quiet, nullptr};
      execle(kProg, kProg, static_cast<char*>(nullptr), env);
    }
    _exit(127);
  }
  close(go[0]);
  const int fd = PerfEventOpen(&attr, child, -1);
  const int open_errno = errno;
  if (fd >= 0) {
    EXPECT_EQ(write(go[1], "x", 1), 1);
  }
  close(go[1]);
  int status = 0;
  waitpid(child, &status, 0);
  if (fd < 0) {
    if (open_errno == EACCES || open_errno == EPERM) {
      *skip = fmt::format("perf_event_open refused: {}", std::strerror(open_errno));
    } else {
      ADD_FAILURE() << "perf_event_open: " << std::strerror(open_errno);
    }
    return std::nullopt;
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 127) << status;
  uint64_t count = 0;
  EXPECT_EQ(read(fd, &count, sizeof(count)), static_cast<ssize_t>(sizeof(count)));
  close(fd);
  return count;
}

TEST(EventSpecLiveTest, KernelAcceptsUprobeAndItFiresOnce) {
  if (!fs::exists("/sys/bus/event_source/devices/uprobe/type")) {
    GTEST_SKIP() << "no uprobe PMU here (/sys/bus/event_source/devices/uprobe)";
  }
  for (const char* kind : {"uprobe", "uretprobe"}) {
    auto specs = ParseEventList(fmt::format("{}:{}:main", kind, kProg), EventParseOptions{});
    ASSERT_TRUE(specs) << specs.error().message;
    ASSERT_EQ(specs->size(), 1u);
    std::string skip;
    const std::optional<uint64_t> count = CountInFixture(specs->front(), &skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    // main runs once: a wrong offset would count 0 (or fail to open).
    EXPECT_EQ(count, 1u) << kind;
  }
}

TEST(EventSpecLiveTest, SchedSwitchTracepoint) {
  auto specs = ParseEventList("sched:sched_switch", EventParseOptions{});
  if (!specs && specs.error().message.find("mount") != std::string::npos) {
    GTEST_SKIP() << "tracefs unavailable: " << specs.error().message;
  }
  ASSERT_TRUE(specs) << specs.error().message;
  const EventSpec& spec = specs->front();
  EXPECT_EQ(spec.attr.type, PERF_TYPE_TRACEPOINT);
  // The id as tracefs publishes it, wherever it is mounted now.
  std::optional<uint64_t> id;
  std::ifstream mounts("/proc/mounts");
  std::string device, mount_point, type, rest;
  std::vector<std::string> roots;
  while (mounts >> device >> mount_point >> type && std::getline(mounts, rest)) {
    if (type == "tracefs") roots.push_back(mount_point);
  }
  roots.push_back("/sys/kernel/tracing");
  roots.push_back("/sys/kernel/debug/tracing");
  for (const std::string& root : roots) {
    std::ifstream in(root + "/events/sched/sched_switch/id");
    uint64_t value = 0;
    if (in >> value) {
      id = value;
      break;
    }
  }
  ASSERT_TRUE(id);
  EXPECT_EQ(spec.attr.config, *id);

  perf_event_attr attr = spec.attr;
  attr.size = sizeof(attr);
  const int fd = PerfEventOpen(&attr, 0, -1);
  if (fd < 0 && (errno == EACCES || errno == EPERM)) {
    GTEST_SKIP() << "perf_event_open refused the tracepoint: " << std::strerror(errno);
  }
  ASSERT_GE(fd, 0) << std::strerror(errno);
  for (int i = 0; i < 3; ++i) usleep(1000);  // each sleep switches out
  uint64_t count = 0;
  EXPECT_EQ(read(fd, &count, sizeof(count)), static_cast<ssize_t>(sizeof(count)));
  close(fd);
  EXPECT_GE(count, 3u);
}

}  // namespace
}  // namespace sample
