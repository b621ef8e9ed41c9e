// Tests for the attrs EventOpener::Create builds from parsed events and the
// recording's defaults, call graphs above all: what the file's event table
// records is what these attrs hold. Nothing is opened here.
#include "record/events/event_opener.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <string>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/event_spec_fixture.h"

namespace sample::record {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kUserBits = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

RecordTarget CommandTarget() {
  RecordTarget target;
  target.kind = TargetKind::kCommand;
  target.cpus = {0};
  target.threads = {1};
  return target;
}

Result<EventOpener> Create(const std::string& events, const SamplingDefaults& defaults) {
  auto specs = ParseEventList(events, {});
  EXPECT_TRUE(specs) << specs.error().message;
  if (!specs) return tl::unexpected(specs.error());
  return EventOpener::Create(std::move(*specs), defaults, CommandTarget());
}

std::vector<EventDesc> Described(const std::string& events, const SamplingDefaults& defaults) {
  auto opener = Create(events, defaults);
  EXPECT_TRUE(opener) << opener.error().message;
  return opener ? opener->Describe() : std::vector<EventDesc>{};
}

SamplingDefaults WithCallGraph(std::string_view mode) {
  SamplingDefaults defaults;
  defaults.arch = Arch::kX86_64;
  defaults.chain_capture = ParseChainCapture(mode).value();
  return defaults;
}

TEST(EventOpenerTest, NoCallGraphByDefault) {
  const auto events = Described("cpu-clock", SamplingDefaults{});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].attr.sample_type & (PERF_SAMPLE_CALLCHAIN | kUserBits), 0u);
}

// The ring buffers carry what perf's do: no CPU (the buffer is one CPU's),
// no identifier with a single event. The file's attrs have the CPU the
// writer inserts, at the place cpu_field() gives.
TEST(EventOpenerTest, RingRecordsLeaveTheCpuToTheWriter) {
  auto one = Create("cpu-clock", SamplingDefaults{});
  ASSERT_TRUE(one);
  const uint64_t ring = one->Describe()[0].attr.sample_type;
  EXPECT_EQ(ring & (PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER), 0u);
  EXPECT_EQ(one->DescribeFile()[0].attr.sample_type, ring | PERF_SAMPLE_CPU);
  ASSERT_TRUE(one->cpu_field());
  EXPECT_EQ(one->cpu_field()->sample_offset, 8u + 3 * 8);  // header, ip, tid, time
  EXPECT_EQ(one->cpu_field()->from_trailer_end, 0u);

  auto two = Create("cpu-clock,page-faults", SamplingDefaults{});
  ASSERT_TRUE(two);
  for (const EventDesc& e : two->Describe()) {
    EXPECT_EQ(e.attr.sample_type & (PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER),
              uint64_t{PERF_SAMPLE_IDENTIFIER})
        << e.name;
  }
  ASSERT_TRUE(two->cpu_field());
  EXPECT_EQ(two->cpu_field()->sample_offset, 8u + 4 * 8);
  EXPECT_EQ(two->cpu_field()->from_trailer_end, 8u);  // the identifier ends the trailer

  // A sample near 64 KiB has no room for the field: the kernel writes it.
  auto big = Create("cpu-clock", WithCallGraph("dwarf,65528"));
  ASSERT_TRUE(big);
  EXPECT_FALSE(big->cpu_field());
  EXPECT_EQ(big->Describe()[0].attr.sample_type & PERF_SAMPLE_CPU, uint64_t{PERF_SAMPLE_CPU});
  EXPECT_EQ(big->DescribeFile()[0].attr.sample_type, big->Describe()[0].attr.sample_type);
}

// Without -D the first event tracks the sideband and every leader is turned
// on by the exec.
TEST(EventOpenerTest, FirstEventTracksTheSidebandWithoutDelay) {
  const auto events = Described("cpu-clock,page-faults", SamplingDefaults{});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].attr.mmap2 && events[0].attr.comm && events[0].attr.task);
  EXPECT_FALSE(events[1].attr.mmap2 || events[1].attr.comm || events[1].attr.task);
  EXPECT_TRUE(events[0].attr.enable_on_exec);
  EXPECT_TRUE(events[1].attr.enable_on_exec);
}

// -D: sampling starts late, but the exec's COMM and the MMAP2s before the
// delay ends are needed to name anything; a dummy event, on from the exec,
// carries them (the sampling events wait, off, for the delay).
TEST(EventOpenerTest, DelayedSamplingKeepsTheSidebandFlowing) {
  SamplingDefaults defaults = WithCallGraph("dwarf,4096");
  defaults.delayed = true;
  const auto events = Described("{cpu-clock,task-clock}:S", defaults);
  ASSERT_EQ(events.size(), 3u);
  const perf_event_attr& dummy = events[2].attr;
  EXPECT_EQ(events[2].name, "dummy");
  EXPECT_EQ(dummy.type, uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(dummy.config, uint64_t{PERF_COUNT_SW_DUMMY});
  EXPECT_TRUE(dummy.mmap && dummy.mmap2 && dummy.comm && dummy.comm_exec && dummy.task);
  EXPECT_TRUE(dummy.disabled);
  EXPECT_TRUE(dummy.enable_on_exec);
  EXPECT_TRUE(dummy.sample_id_all);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(events[i].name);
    EXPECT_FALSE(events[i].attr.mmap || events[i].attr.mmap2 || events[i].attr.comm ||
                 events[i].attr.task);
    EXPECT_FALSE(events[i].attr.enable_on_exec);
    // The same record layout as the dummy's, so sideband parses alike.
    EXPECT_EQ(events[i].attr.sample_type & ~uint64_t{PERF_SAMPLE_READ}, dummy.sample_type);
  }
  EXPECT_TRUE(events[0].attr.disabled);   // the leader waits for the delay
  EXPECT_FALSE(events[1].attr.disabled);  // the member follows it

  // A user-only recording's dummy is user-only too.
  auto user = Described("cpu-clock:u", defaults);
  ASSERT_EQ(user.size(), 2u);
  EXPECT_EQ(user[1].name, "dummy:u");
  EXPECT_TRUE(user[1].attr.exclude_kernel);
}

// Tracepoints, breakpoints and uprobes count occurrences that each matter:
// without -c or -F they sample every hit (period 1, no frequency), as perf
// does; a timer keeps the 4 kHz default. The fake trees give the tracepoint
// and the uprobe PMU; the uprobe's binary is the fixture program.
TEST(EventOpenerTest, EventsThatCountOccurrencesSampleEveryHit) {
  const testing::FakeTrees trees;
  const std::string prog = FIXTURE_PROG_PATH;
  const std::string list = "sched:sched_switch,mem:0x1000:w,uprobe:" + prog +
                           ":main,uretprobe:" + prog + ":main,cpu-clock,fakepmu/event=1/";
  auto describe = [&](const SamplingDefaults& defaults) {
    auto specs = ParseEventList(list, trees.options());
    EXPECT_TRUE(specs) << specs.error().message;
    if (!specs) return std::vector<EventDesc>{};
    auto opener = EventOpener::Create(std::move(*specs), defaults, CommandTarget());
    EXPECT_TRUE(opener) << opener.error().message;
    return opener ? opener->Describe() : std::vector<EventDesc>{};
  };
  const auto plain = describe(SamplingDefaults{});
  ASSERT_EQ(plain.size(), 6u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plain[i].attr.freq, 0u) << plain[i].name;
    EXPECT_EQ(plain[i].attr.sample_period, 1u) << plain[i].name;
  }
  for (size_t i = 4; i < 6; ++i) {
    EXPECT_EQ(plain[i].attr.freq, 1u) << plain[i].name;
    EXPECT_EQ(plain[i].attr.sample_freq, kDefaultFrequency) << plain[i].name;
  }
  // -c and -F are for every event, these included, as in perf.
  SamplingDefaults count;
  count.period = 100;
  for (const EventDesc& e : describe(count)) {
    EXPECT_EQ(e.attr.freq, 0u) << e.name;
    EXPECT_EQ(e.attr.sample_period, 100u) << e.name;
  }
  SamplingDefaults freq;
  freq.frequency = 500;
  for (const EventDesc& e : describe(freq)) {
    EXPECT_EQ(e.attr.freq, 1u) << e.name;
    EXPECT_EQ(e.attr.sample_freq, 500u) << e.name;
  }
  SamplingDefaults default_freq;
  default_freq.frequency = kDefaultFrequency;  // -F 4000 given explicitly
  for (const EventDesc& e : describe(default_freq)) {
    EXPECT_EQ(e.attr.freq, 1u) << e.name;
    EXPECT_EQ(e.attr.sample_freq, kDefaultFrequency) << e.name;
  }
  // So are an event's own terms.
  auto specs =
      ParseEventList("sched:sched_switch/period=7/,sched:sched_wakeup/freq=30/", trees.options());
  ASSERT_TRUE(specs) << specs.error().message;
  auto terms = EventOpener::Create(std::move(*specs), SamplingDefaults{}, CommandTarget());
  ASSERT_TRUE(terms) << terms.error().message;
  const auto termed = terms->Describe();
  ASSERT_EQ(termed.size(), 2u);
  EXPECT_EQ(termed[0].attr.freq, 0u);
  EXPECT_EQ(termed[0].attr.sample_period, 7u);
  EXPECT_EQ(termed[1].attr.freq, 1u);
  EXPECT_EQ(termed[1].attr.sample_freq, 30u);
}

TEST(EventOpenerTest, DwarfModeReachesEveryEvent) {
  const auto events = Described("cpu-clock,page-faults", WithCallGraph("dwarf,4000"));
  ASSERT_EQ(events.size(), 2u);
  for (const EventDesc& e : events) {
    EXPECT_EQ(e.attr.sample_type & (PERF_SAMPLE_CALLCHAIN | kUserBits),
              PERF_SAMPLE_CALLCHAIN | kUserBits)
        << e.name;
    EXPECT_EQ(e.attr.sample_regs_user, UnwindRegsMask(Arch::kX86_64));
    EXPECT_EQ(e.attr.sample_stack_user, 4000u);
    EXPECT_EQ(e.attr.exclude_callchain_user, 1u);
    EXPECT_EQ(ChainCaptureFromAttr(e.attr), ParseChainCapture("dwarf,4000").value());
  }
}

TEST(EventOpenerTest, LeafModeAddsRegistersToFramePointerChains) {
  const auto events = Described("cpu-clock", WithCallGraph("fp,leaf"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].attr.sample_type & (PERF_SAMPLE_CALLCHAIN | kUserBits),
            PERF_SAMPLE_CALLCHAIN | kUserBits);
  EXPECT_EQ(events[0].attr.sample_regs_user, LeafRegsMask(Arch::kX86_64));
  EXPECT_EQ(events[0].attr.sample_stack_user, kDefaultLeafStackSize);
  EXPECT_EQ(events[0].attr.exclude_callchain_user, 0u);
}

TEST(EventOpenerTest, EventTermsOverrideTheRecordingMode) {
  SamplingDefaults defaults = WithCallGraph("fp");
  const auto events = Described(
      "cpu-clock/call-graph=dwarf/,task-clock/call-graph=dwarf,stack-size=1024/,"
      "page-faults/call-graph=no/,minor-faults",
      defaults);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(ChainCaptureFromAttr(events[0].attr), ParseChainCapture("dwarf").value());
  EXPECT_EQ(ChainCaptureFromAttr(events[1].attr), ParseChainCapture("dwarf,1024").value());
  EXPECT_EQ(ChainCaptureFromAttr(events[2].attr), ChainCaptureOptions{});
  EXPECT_EQ(ChainCaptureFromAttr(events[3].attr), ParseChainCapture("fp").value());
  // The same mode as the recording's keeps its settings; stack-size alone
  // resizes the recording's copy.
  const auto leaf =
      Described("cpu-clock/call-graph=fp/,task-clock/stack-size=64/", WithCallGraph("fp,leaf,256"));
  ASSERT_EQ(leaf.size(), 2u);
  EXPECT_EQ(ChainCaptureFromAttr(leaf[0].attr), ParseChainCapture("fp,leaf,256").value());
  EXPECT_EQ(ChainCaptureFromAttr(leaf[1].attr), ParseChainCapture("fp,leaf,64").value());
  // A term turns call chains on without -g, as in perf.
  const auto term_only = Described("cpu-clock/call-graph=dwarf/", SamplingDefaults{});
  ASSERT_EQ(term_only.size(), 1u);
  EXPECT_EQ(ChainCaptureFromAttr(term_only[0].attr).mode, ChainCapture::kDwarf);
}

TEST(EventOpenerTest, StackSizeNeedsAModeThatCopiesTheStack) {
  for (const char* mode : {"no", "fp"}) {
    auto opener = Create("cpu-clock/stack-size=4096/", WithCallGraph(mode));
    ASSERT_FALSE(opener) << mode;
    EXPECT_THAT(opener.error().message,
                HasSubstr("event 'cpu-clock/stack-size=4096/': stack-size=4096 needs a call "
                          "graph that copies the stack"));
  }
  EXPECT_TRUE(Create("cpu-clock/call-graph=dwarf,stack-size=4096/", WithCallGraph("fp")));
}

TEST(EventOpenerTest, UnknownArchitectureFailsClearly) {
  SamplingDefaults defaults = WithCallGraph("dwarf");
  defaults.arch = Arch::kUnknown;
  auto opener = Create("cpu-clock", defaults);
  ASSERT_FALSE(opener);
  EXPECT_THAT(opener.error().message, HasSubstr("event 'cpu-clock': dwarf call graphs need"));
  defaults.chain_capture = ParseChainCapture("fp").value();
  EXPECT_TRUE(Create("cpu-clock", defaults));
}

// A buffer that cannot hold a few samples loses them all: -m 2 is 8 KiB,
// less than one sample with an 8 KiB stack copy.
TEST(EventOpenerTest, RingBufferMustHoldSeveralStackCopies) {
  SamplingDefaults defaults = WithCallGraph("dwarf");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (page != 4096) GTEST_SKIP() << "the sizes below are for 4 KiB pages";
  defaults.mmap_pages = 2;
  auto opener = Create("cpu-clock", defaults);
  ASSERT_FALSE(opener);
  EXPECT_THAT(opener.error().message,
              HasSubstr(fmt::format("-m 2 ({} KiB per CPU) holds fewer than two samples with "
                                    "8192-byte user stack copies; use -m {} or more",
                                    2 * page / 1024, 8)));
  defaults.mmap_pages = 4;  // 16 KiB: one sample
  EXPECT_FALSE(Create("cpu-clock", defaults));
  defaults.mmap_pages = 8;  // 32 KiB: three, as perf takes them
  EXPECT_TRUE(Create("cpu-clock", defaults));
  // Terms count too; fp,leaf's small copies (-g) fit a page, and fp copies none.
  defaults.chain_capture = ChainCaptureOptions{};
  defaults.mmap_pages = 1;
  EXPECT_FALSE(Create("cpu-clock/call-graph=dwarf/", defaults));
  EXPECT_TRUE(Create("cpu-clock", WithCallGraph("fp")));
  SamplingDefaults leaf = WithCallGraph("fp,leaf");
  leaf.mmap_pages = 1;
  EXPECT_TRUE(Create("cpu-clock", leaf));
}

}  // namespace
}  // namespace sample::record
