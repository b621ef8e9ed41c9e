#include "libsample/perf/perf_record.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "libsample/perf/event_table.h"
#include "libsample/perf/record_walker.h"
#include "tests/unit/synthetic_records.h"

namespace sample {
namespace {

using testing::Bytes;
using testing::MakeAttr;
using testing::SampleFields;
using testing::SampleIdFields;

constexpr uint64_t kAllSampleFields = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                      PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
                                      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                      PERF_SAMPLE_CALLCHAIN;
constexpr uint64_t kRecorderSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                         PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                         PERF_SAMPLE_CALLCHAIN;

const SampleIdFields kSid{
    .pid = 41, .tid = 42, .time = 123456789, .id = 77, .stream_id = 78, .cpu = 3};

SampleFields FullSample() {
  SampleFields f;
  f.misc = PERF_RECORD_MISC_KERNEL;
  f.id = 0x1111;
  f.ip = 0xffffffff81001234;
  f.pid = 100;
  f.tid = 101;
  f.time = 0x123456789abc;
  f.addr = 0xdead0000;
  f.stream_id = 0x2222;
  f.cpu = 7;
  f.period = 250000;
  f.callchain = {PERF_CONTEXT_KERNEL, 0xffffffff81001234, 0xffffffff81005678,
                 PERF_CONTEXT_USER,   0x401000,           0x402000};
  return f;
}

std::vector<uint64_t> ToVector(const U64List& list) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < list.size(); ++i) out.push_back(list[i]);
  return out;
}

// The sample_id a parser should report for `sid` under `attr`: fields whose
// bit is off, or every field without sample_id_all, stay zero.
void ExpectSampleId(const SampleId& got, const perf_event_attr& attr, const SampleIdFields& sid) {
  const uint64_t t = attr.sample_id_all ? attr.sample_type : 0;
  EXPECT_EQ(got.pid, (t & PERF_SAMPLE_TID) ? sid.pid : 0u);
  EXPECT_EQ(got.tid, (t & PERF_SAMPLE_TID) ? sid.tid : 0u);
  EXPECT_EQ(got.time, (t & PERF_SAMPLE_TIME) ? sid.time : 0u);
  EXPECT_EQ(got.id, (t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) ? sid.id : 0u);
  EXPECT_EQ(got.cpu, (t & PERF_SAMPLE_CPU) ? sid.cpu : 0u);
}

// Attribute sets every non-sample builder is tried with.
std::vector<perf_event_attr> TrailerAttrs() {
  return {MakeAttr(kRecorderSampleType, true),
          MakeAttr(kRecorderSampleType, false),
          MakeAttr(kAllSampleFields, true),
          MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TIME, true),
          MakeAttr(PERF_SAMPLE_TID | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID, true),
          MakeAttr(PERF_SAMPLE_IP, true)};
}

TEST(SyntheticRecordsTest, SampleLayoutMatchesTheKernel) {
  const auto attr = MakeAttr(kAllSampleFields, false);
  const Bytes r = testing::MakeSample(attr, FullSample());
  // header + identifier, ip, pid/tid, time, addr, id, stream_id, cpu/res,
  // period, nr + 6 ips.
  ASSERT_EQ(r.size(), 8u + 9 * 8 + 8 + 6 * 8);
  const perf_event_header h = ReadRecordHeader(r);
  EXPECT_EQ(h.type, PERF_RECORD_SAMPLE);
  EXPECT_EQ(h.misc, PERF_RECORD_MISC_KERNEL);
  EXPECT_EQ(h.size, r.size());
  uint64_t first;
  std::memcpy(&first, r.data() + 8, 8);
  EXPECT_EQ(first, 0x1111u);  // PERF_SAMPLE_IDENTIFIER comes first
}

TEST(SyntheticRecordsTest, StringsArePaddedToEightWithANul) {
  const auto attr = MakeAttr(kRecorderSampleType, false);
  for (size_t len = 0; len <= 17; ++len) {
    const Bytes r = testing::MakeComm(attr, 1, 1, std::string(len, 'x'), false);
    EXPECT_EQ(r.size(), 8 + 8 + ((len + 1 + 7) / 8) * 8) << len;
    EXPECT_EQ(r[16 + len], std::byte{0}) << len;
  }
}

TEST(PerfRecordTest, SampleRoundTripsEveryField) {
  const SampleFields f = FullSample();
  for (uint64_t t :
       {kAllSampleFields, kAllSampleFields & ~uint64_t{PERF_SAMPLE_IDENTIFIER}, kRecorderSampleType,
        uint64_t{PERF_SAMPLE_ID | PERF_SAMPLE_CPU}, uint64_t{PERF_SAMPLE_IP}}) {
    const auto attr = MakeAttr(t, true);
    const Bytes r = testing::MakeSample(attr, f);  // the views point into it
    auto s = ParseSample(r, attr);
    ASSERT_TRUE(s.has_value()) << t;
    auto want = [t](uint64_t bits, uint64_t value, uint64_t absent = 0) {
      return (t & bits) ? value : absent;
    };
    EXPECT_EQ(s->id, want(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID, f.id)) << t;
    EXPECT_EQ(s->ip, want(PERF_SAMPLE_IP, f.ip)) << t;
    EXPECT_EQ(s->pid, want(PERF_SAMPLE_TID, f.pid)) << t;
    EXPECT_EQ(s->tid, want(PERF_SAMPLE_TID, f.tid)) << t;
    EXPECT_EQ(s->time, want(PERF_SAMPLE_TIME, f.time)) << t;
    EXPECT_EQ(s->addr, want(PERF_SAMPLE_ADDR, f.addr)) << t;
    EXPECT_EQ(s->cpu, want(PERF_SAMPLE_CPU, f.cpu)) << t;
    // Without PERF_SAMPLE_PERIOD each sample counts as the fixed period.
    const uint64_t fixed = attr.freq || attr.sample_period == 0 ? 1 : attr.sample_period;
    EXPECT_EQ(s->period, want(PERF_SAMPLE_PERIOD, f.period, fixed)) << t;
    EXPECT_EQ(ToVector(s->callchain),
              (t & PERF_SAMPLE_CALLCHAIN) ? f.callchain : std::vector<uint64_t>{});
  }
}

// Without PERF_SAMPLE_PERIOD a sample of a fixed-period event stands for
// sample_period hits (the kernel kept every Nth), as perf reads it.
TEST(PerfRecordTest, WithoutThePeriodFieldASampleStandsForTheFixedPeriod) {
  auto attr = MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TID, false);
  attr.sample_period = 20;
  Bytes r = testing::MakeSample(attr, FullSample());
  EXPECT_EQ(ParseSample(r, attr)->period, 20u);
  attr.freq = 1;  // sample_freq, not a period
  EXPECT_EQ(ParseSample(r, attr)->period, 1u);
  attr.freq = 0;
  attr.sample_period = 1;
  EXPECT_EQ(ParseSample(r, attr)->period, 1u);
}

// -d --phys-data --data-page-size: the fields past the user stack, with
// perf mem's weight, data source and interrupt registers before them.
TEST(PerfRecordTest, PhysicalAddressAndDataPageSizeAfterTheStack) {
  auto words = [](std::initializer_list<uint64_t> values) {
    Bytes out(values.size() * 8);
    size_t i = 0;
    for (uint64_t v : values) std::memcpy(out.data() + 8 * i++, &v, 8);
    return out;
  };
  SampleFields f = FullSample();
  f.callchain.clear();
  const uint64_t tail = PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_REGS_INTR |
                        PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE;
  auto attr = MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | tail, false);
  attr.sample_regs_intr = 0b101;  // two registers
  // weight, data_src, regs_intr (abi, 2 values), phys_addr, cgroup, page size
  f.extra = words({7, 9, PERF_SAMPLE_REGS_ABI_64, 1, 2, 0x12345000, 55, 4096});
  Bytes r = testing::MakeSample(attr, f);
  auto s = ParseSample(r, attr);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->addr, f.addr);
  EXPECT_EQ(s->phys_addr, 0x12345000u);
  EXPECT_EQ(s->data_page_size, 4096u);
  // A kernel thread's interrupt registers: the ABI word alone.
  f.extra = words({7, 9, PERF_SAMPLE_REGS_ABI_NONE, 0x6000, 55, 2097152});
  r = testing::MakeSample(attr, f);
  s = ParseSample(r, attr);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->phys_addr, 0x6000u);
  EXPECT_EQ(s->data_page_size, 2097152u);
  // Cut short: refused, not read past the end.
  f.extra = words({7, 9, PERF_SAMPLE_REGS_ABI_NONE, 0x6000});
  EXPECT_FALSE(ParseSample(testing::MakeSample(attr, f), attr).has_value());
}

TEST(PerfRecordTest, SampleReadValuesAreSkippedBeforeTheCallchain) {
  struct Case {
    uint64_t read_format;
    std::vector<uint64_t> values;
  };
  const std::vector<Case> cases = {
      {0, {5}},
      {PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID,
       {5, 6, 7, 8}},
      {PERF_FORMAT_ID | PERF_FORMAT_LOST, {5, 6, 7}},
      // group: nr, time_enabled, then {value, id} x nr
      {PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_ID, {2, 9, 10, 11, 12, 13}},
      {PERF_FORMAT_GROUP, {0}},
  };
  for (const Case& c : cases) {
    const auto attr = MakeAttr(kRecorderSampleType | PERF_SAMPLE_READ, true, c.read_format);
    SampleFields f = FullSample();
    f.read_values = c.values;
    const Bytes r = testing::MakeSample(attr, f);  // the views point into it
    auto s = ParseSample(r, attr);
    ASSERT_TRUE(s.has_value()) << c.read_format;
    EXPECT_EQ(s->period, f.period);
    EXPECT_EQ(ToVector(s->callchain), f.callchain) << c.read_format;
  }
}

TEST(PerfRecordTest, SampleReadValuesAreParsed) {
  // A group read as sample-record asks for it: nr, then {value, id} x nr.
  auto attr =
      MakeAttr(kRecorderSampleType | PERF_SAMPLE_READ, true, PERF_FORMAT_GROUP | PERF_FORMAT_ID);
  SampleFields f = FullSample();
  f.read_values = {2, 1000, 71, 2000, 72};
  Bytes r = testing::MakeSample(attr, f);
  auto s = ParseSample(r, attr);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->read.size(), 2u);
  EXPECT_EQ(s->read.value(0), 1000u);
  EXPECT_EQ(s->read.id(0), 71u);
  EXPECT_EQ(s->read.value(1), 2000u);
  EXPECT_EQ(s->read.id(1), 72u);
  EXPECT_EQ(s->read.lost(1), 0u);

  // Group with both times and lost counts.
  attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                     PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_LOST;
  f.read_values = {2, 500, 400, 10, 81, 1, 20, 82, 2};
  r = testing::MakeSample(attr, f);
  s = ParseSample(r, attr);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->time_enabled, 500u);
  EXPECT_EQ(s->time_running, 400u);
  ASSERT_EQ(s->read.size(), 2u);
  EXPECT_EQ(s->read.value(1), 20u);
  EXPECT_EQ(s->read.id(1), 82u);
  EXPECT_EQ(s->read.lost(1), 2u);
  EXPECT_EQ(ToVector(s->callchain), f.callchain);

  // A single event: value, the times, id, lost.
  attr.read_format = PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_LOST;
  f.read_values = {42, 300, 91, 3};
  r = testing::MakeSample(attr, f);
  s = ParseSample(r, attr);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->read.size(), 1u);
  EXPECT_EQ(s->read.value(0), 42u);
  EXPECT_EQ(s->time_running, 300u);
  EXPECT_EQ(s->read.id(0), 91u);
  EXPECT_EQ(s->read.lost(0), 3u);

  // nr larger than the record holds.
  attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  f.read_values = {3, 1, 2};
  f.callchain.clear();
  EXPECT_FALSE(ParseSample(testing::MakeSample(attr, f), attr).has_value());
}

TEST(PerfRecordTest, UserRegsAndStackAreParsed) {
  auto attr = MakeAttr(kRecorderSampleType | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, true);
  attr.sample_regs_user = 0b1011;  // three registers
  SampleFields f = FullSample();
  f.extra = testing::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {11, 22, 33});
  std::vector<std::byte> stack(40);
  for (size_t i = 0; i < stack.size(); ++i) stack[i] = std::byte(i);
  const Bytes stack_block = testing::StackUserBlock(stack, 64);
  f.extra.insert(f.extra.end(), stack_block.begin(), stack_block.end());
  // The parsed sample views the record's bytes: they must outlive it.
  Bytes record = testing::MakeSample(attr, f);
  auto s = ParseSample(record, attr);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->regs_abi, uint64_t{PERF_SAMPLE_REGS_ABI_64});
  EXPECT_EQ(ToVector(s->user_regs), (std::vector<uint64_t>{11, 22, 33}));
  ASSERT_EQ(s->user_stack.size(), 40u);  // dyn_size, not the padded size
  EXPECT_TRUE(std::ranges::equal(s->user_stack, stack));
  EXPECT_EQ(ToVector(s->callchain), f.callchain);

  // A kernel thread: no registers, an empty stack (size 0, no dyn_size).
  f.extra = testing::RegsUserBlock(PERF_SAMPLE_REGS_ABI_NONE, {});
  const Bytes empty_stack = testing::StackUserBlock({}, 0);
  f.extra.insert(f.extra.end(), empty_stack.begin(), empty_stack.end());
  record = testing::MakeSample(attr, f);
  s = ParseSample(record, attr);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->user_regs.empty());
  EXPECT_TRUE(s->user_stack.empty());

  // A stack size past the record's end.
  f.extra = testing::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {1, 2, 3});
  const Bytes torn = testing::StackUserBlock(stack, 64);
  f.extra.insert(f.extra.end(), torn.begin(), torn.begin() + 40);
  EXPECT_FALSE(ParseSample(testing::MakeSample(attr, f), attr).has_value());
  // Registers missing.
  f.extra = testing::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {1, 2});
  EXPECT_FALSE(ParseSample(testing::MakeSample(attr, f), attr).has_value());
}

TEST(PerfRecordTest, RawAndBranchStackAreSkipped) {
  auto attr = MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK |
                           PERF_SAMPLE_REGS_USER,
                       true);
  attr.sample_regs_user = 1;
  SampleFields f;
  f.ip = 0x1234;
  // RAW: u32 size + 12 bytes = 16; branch stack: nr = 1 and one entry.
  f.extra.resize(16 + 8 + 24);
  const uint32_t raw_size = 12;
  std::memcpy(f.extra.data(), &raw_size, 4);
  f.extra[4] = std::byte{0xaa};
  const uint64_t nr = 1;
  std::memcpy(f.extra.data() + 16, &nr, 8);
  const Bytes regs = testing::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {77});
  f.extra.insert(f.extra.end(), regs.begin(), regs.end());
  const Bytes record = testing::MakeSample(attr, f);
  auto s = ParseSample(record, attr);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->raw.size(), 12u);
  EXPECT_EQ(s->raw[0], std::byte{0xaa});
  ASSERT_EQ(s->user_regs.size(), 1u);
  EXPECT_EQ(s->user_regs[0], 77u);
}

TEST(PerfRecordTest, SampleWithImpossibleCountsIsRejected) {
  auto attr = MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, true);
  SampleFields f;
  f.callchain = {1, 2};
  Bytes r = testing::MakeSample(attr, f);
  // nr = 2^61 + 1: nr * 8 wraps to 8, which would fit.
  const uint64_t huge_nr = (uint64_t{1} << 61) + 1;
  std::memcpy(r.data() + 16, &huge_nr, 8);
  EXPECT_FALSE(ParseSample(r, attr).has_value());
  const uint64_t three = 3;
  std::memcpy(r.data() + 16, &three, 8);
  EXPECT_FALSE(ParseSample(r, attr).has_value());

  attr = MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_READ, true, PERF_FORMAT_GROUP | PERF_FORMAT_ID);
  f.read_values = {uint64_t{1} << 62, 0, 0};
  EXPECT_FALSE(ParseSample(testing::MakeSample(attr, f), attr).has_value());
}

TEST(PerfRecordTest, CallchainIsReadWithoutAlignment) {
  const auto attr = MakeAttr(kRecorderSampleType, true);
  const SampleFields f = FullSample();
  const Bytes r = testing::MakeSample(attr, f);
  Bytes shifted(r.size() + 3);
  std::memcpy(shifted.data() + 3, r.data(), r.size());
  auto s = ParseSample(std::span(shifted).subspan(3), attr);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->tid, f.tid);
  EXPECT_EQ(ToVector(s->callchain), f.callchain);
}

TEST(PerfRecordTest, ContextMarkers) {
  for (uint64_t marker :
       {PERF_CONTEXT_HV, PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER, PERF_CONTEXT_GUEST,
        PERF_CONTEXT_GUEST_KERNEL, PERF_CONTEXT_GUEST_USER, PERF_CONTEXT_MAX}) {
    EXPECT_TRUE(IsContextMarker(marker)) << std::hex << marker;
  }
  // The highest kernel text addresses are not markers.
  for (uint64_t ip : std::initializer_list<uint64_t>{
           uint64_t{PERF_CONTEXT_MAX} - 1, 0xffffffffff600000, 0xffffffff81000000, 0x401000, 0}) {
    EXPECT_FALSE(IsContextMarker(ip)) << std::hex << ip;
  }
}

TEST(PerfRecordTest, Mmap2RoundTrips) {
  for (const perf_event_attr& attr : TrailerAttrs()) {
    for (size_t build_id_size : {0, 8, 20}) {
      for (std::string name : {"", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/bin/ls", "1234567"}) {
        testing::Mmap2Fields f =
            testing::MakeMmap2Fields(name, 10, 11, 0x7f0000001000, 0x23000, 0x1000);
        f.maj = 8;
        f.min = 1;
        f.ino = 999;
        f.ino_generation = 5;
        f.prot = PROT_READ;
        f.flags = MAP_SHARED;
        for (size_t i = 0; i < build_id_size; ++i) f.build_id.push_back(0xa0 + i);
        const Bytes r = testing::MakeMmap2(attr, f, kSid);
        ASSERT_EQ(r.size() % 8, 0u);
        auto m = ParseMmap2(r, attr);
        ASSERT_TRUE(m.has_value()) << name;
        EXPECT_EQ(m->pid, 10u);
        EXPECT_EQ(m->tid, 11u);
        EXPECT_EQ(m->addr, f.addr);
        EXPECT_EQ(m->len, f.len);
        EXPECT_EQ(m->pgoff, f.pgoff);
        EXPECT_EQ(m->prot, f.prot);
        EXPECT_EQ(m->flags, f.flags);
        EXPECT_EQ(m->filename, name);
        ASSERT_EQ(m->build_id.size(), build_id_size);
        for (size_t i = 0; i < build_id_size; ++i) {
          EXPECT_EQ(static_cast<uint8_t>(m->build_id[i]), f.build_id[i]);
        }
        ExpectSampleId(m->sample_id, attr, kSid);
      }
    }
  }
}

TEST(PerfRecordTest, CommRoundTrips) {
  for (const perf_event_attr& attr : TrailerAttrs()) {
    for (bool exec : {false, true}) {
      for (std::string name : {"", "bash", "1234567", "12345678", "fifteen-chars!!"}) {
        const Bytes r = testing::MakeComm(attr, 500, 501, name, exec, kSid);
        EXPECT_EQ(ReadRecordHeader(r).type, PERF_RECORD_COMM);
        auto c = ParseComm(r, attr);
        ASSERT_TRUE(c.has_value());
        EXPECT_EQ(c->pid, 500u);
        EXPECT_EQ(c->tid, 501u);
        EXPECT_EQ(c->comm, name);
        EXPECT_EQ(c->exec, exec);
        ExpectSampleId(c->sample_id, attr, kSid);
      }
    }
  }
}

TEST(PerfRecordTest, ForkExitLostThrottleRoundTrip) {
  for (const perf_event_attr& attr : TrailerAttrs()) {
    for (uint32_t type : {PERF_RECORD_FORK, PERF_RECORD_EXIT}) {
      const Bytes r = type == PERF_RECORD_FORK ? testing::MakeFork(attr, 20, 10, 21, 11, 999, kSid)
                                               : testing::MakeExit(attr, 20, 10, 21, 11, 999, kSid);
      EXPECT_EQ(ReadRecordHeader(r).type, type);
      auto t = ParseTask(r, attr);
      ASSERT_TRUE(t.has_value());
      EXPECT_EQ(t->pid, 20u);
      EXPECT_EQ(t->ppid, 10u);
      EXPECT_EQ(t->tid, 21u);
      EXPECT_EQ(t->ptid, 11u);
      EXPECT_EQ(t->time, 999u);
      ExpectSampleId(t->sample_id, attr, kSid);
      auto sid = ParseSampleIdTrailer(r, attr);
      ASSERT_TRUE(sid.has_value());
      ExpectSampleId(*sid, attr, kSid);
    }
    const Bytes lost_record = testing::MakeLost(attr, 0xabc, 4096, kSid);
    auto lost = ParseLost(lost_record, attr);
    ASSERT_TRUE(lost.has_value());
    EXPECT_EQ(lost->id, 0xabcu);
    EXPECT_EQ(lost->lost, 4096u);
    ExpectSampleId(lost->sample_id, attr, kSid);

    const Bytes ls = testing::MakeLostSamples(attr, 17, kSid);
    EXPECT_EQ(ReadRecordHeader(ls).type, PERF_RECORD_LOST_SAMPLES);
    auto lost_samples = ParseLostSamples(ls, attr);
    ASSERT_TRUE(lost_samples.has_value());
    EXPECT_EQ(lost_samples->lost, 17u);
    ExpectSampleId(lost_samples->sample_id, attr, kSid);

    for (bool unthrottle : {false, true}) {
      const Bytes t = testing::MakeThrottle(attr, unthrottle, 5555, 66, 67, kSid);
      EXPECT_EQ(ReadRecordHeader(t).type,
                unthrottle ? PERF_RECORD_UNTHROTTLE : PERF_RECORD_THROTTLE);
      auto th = ParseThrottle(t, attr);
      ASSERT_TRUE(th.has_value());
      EXPECT_EQ(th->time, 5555u);
      EXPECT_EQ(th->id, 66u);
      EXPECT_EQ(th->stream_id, 67u);
      ExpectSampleId(th->sample_id, attr, kSid);
    }

    for (bool out : {false, true}) {
      const Bytes sw = testing::MakeSwitch(attr, out, kSid, /*preempted=*/out);
      auto parsed = ParseSwitch(sw, attr);
      ASSERT_TRUE(parsed.has_value());
      EXPECT_EQ(parsed->out, out);
      EXPECT_EQ(parsed->preempted, out);
      EXPECT_FALSE(parsed->cpu_wide);
      ExpectSampleId(parsed->sample_id, attr, kSid);
      const Bytes wide = testing::MakeSwitchCpuWide(attr, out, 81, 82, kSid);
      auto parsed_wide = ParseSwitch(wide, attr);
      ASSERT_TRUE(parsed_wide.has_value());
      EXPECT_EQ(parsed_wide->out, out);
      EXPECT_FALSE(parsed_wide->preempted);
      EXPECT_TRUE(parsed_wide->cpu_wide);
      EXPECT_EQ(parsed_wide->other_pid, 81u);
      EXPECT_EQ(parsed_wide->other_tid, 82u);
      ExpectSampleId(parsed_wide->sample_id, attr, kSid);
      // Other types are not switches; a CPU-wide one too short for its
      // two ids is malformed.
      EXPECT_FALSE(ParseSwitch(testing::MakeLostSamples(attr, 1, kSid), attr).has_value());
      Bytes torn(wide.begin(), wide.end() - 8);
      reinterpret_cast<perf_event_header*>(torn.data())->size = static_cast<uint16_t>(torn.size());
      EXPECT_FALSE(ParseSwitch(torn, attr).has_value());
    }
  }
}

TEST(PerfRecordTest, RecordTimeOfSamples) {
  for (uint64_t extra : {uint64_t{0}, uint64_t{PERF_SAMPLE_IDENTIFIER}, uint64_t{PERF_SAMPLE_IP},
                         uint64_t{PERF_SAMPLE_TID}, uint64_t{kAllSampleFields}}) {
    const auto attr = MakeAttr(PERF_SAMPLE_TIME | extra, true);
    EXPECT_EQ(RecordTime(testing::MakeSample(attr, FullSample()), attr), 0x123456789abcu) << extra;
  }
  const auto no_time = MakeAttr(kAllSampleFields & ~uint64_t{PERF_SAMPLE_TIME}, true);
  EXPECT_EQ(RecordTime(testing::MakeSample(no_time, FullSample()), no_time), 0u);
}

TEST(PerfRecordTest, RecordTimeOfOtherRecordsComesFromTheTrailer) {
  for (const perf_event_attr& attr : TrailerAttrs()) {
    const uint64_t want =
        attr.sample_id_all && (attr.sample_type & PERF_SAMPLE_TIME) ? kSid.time : 0;
    const testing::Mmap2Fields m = testing::MakeMmap2Fields("/usr/bin/a-long-enough-name");
    for (const Bytes& r :
         {testing::MakeMmap2(attr, m, kSid), testing::MakeComm(attr, 1, 2, "x", true, kSid),
          testing::MakeFork(attr, 1, 2, 3, 4, 5, kSid),
          testing::MakeExit(attr, 1, 2, 3, 4, 5, kSid), testing::MakeLost(attr, 1, 2, kSid),
          testing::MakeLostSamples(attr, 1, kSid),
          testing::MakeThrottle(attr, false, 5, 6, 7, kSid)}) {
      EXPECT_EQ(RecordTime(r, attr), want) << ReadRecordHeader(r).type;
    }
  }
}

// Every prefix of a record, copied into a buffer of exactly that size, must
// parse to nullopt, or (for records ending in a string) to the same fixed
// fields with a prefix of the string. Reads of the trailer must not crash.
TEST(PerfRecordTest, TruncatedRecordsNeverParseWrongly) {
  for (const perf_event_attr& attr : TrailerAttrs()) {
    const SampleFields sf = FullSample();
    using Check = std::function<bool(std::span<const std::byte>)>;
    const std::vector<std::pair<Bytes, Check>> cases = {
        {testing::MakeSample(attr, sf), [&](auto r) { return !ParseSample(r, attr); }},
        {testing::MakeMmap2(attr, testing::MakeMmap2Fields("/lib/libfoo.so", 1, 2, 3, 4, 5), kSid),
         [&](auto r) {
           auto m = ParseMmap2(r, attr);
           return !m ||
                  (m->pid == 1 && m->tid == 2 && m->addr == 3 && m->len == 4 && m->pgoff == 5 &&
                   std::string_view("/lib/libfoo.so").starts_with(m->filename));
         }},
        {testing::MakeComm(attr, 7, 8, "a-comm-name", true, kSid),
         [&](auto r) {
           auto c = ParseComm(r, attr);
           return !c || (c->pid == 7 && c->tid == 8 &&
                         std::string_view("a-comm-name").starts_with(c->comm));
         }},
        {testing::MakeFork(attr, 1, 2, 3, 4, 5, kSid), [&](auto r) { return !ParseTask(r, attr); }},
        {testing::MakeExit(attr, 1, 2, 3, 4, 5, kSid), [&](auto r) { return !ParseTask(r, attr); }},
        {testing::MakeLost(attr, 1, 2, kSid), [&](auto r) { return !ParseLost(r, attr); }},
        {testing::MakeLostSamples(attr, 1, kSid),
         [&](auto r) { return !ParseLostSamples(r, attr); }},
        {testing::MakeThrottle(attr, true, 1, 2, 3, kSid),
         [&](auto r) { return !ParseThrottle(r, attr); }}};
    for (const auto& [record, check] : cases) {
      for (size_t len = 0; len < record.size(); ++len) {
        const Bytes cut(record.begin(), record.begin() + len);
        EXPECT_TRUE(check(cut)) << "type " << ReadRecordHeader(record).type << " cut at " << len;
        const uint64_t time = RecordTime(cut, attr);
        if (ReadRecordHeader(record).type == PERF_RECORD_SAMPLE) {
          EXPECT_TRUE(time == 0 || time == sf.time) << len;
        }
        (void)ParseSampleIdTrailer(cut, attr);
      }
    }
  }
}

TEST(RecordWalkerTest, VisitsEveryRecordInOrder) {
  const auto attr = MakeAttr(kRecorderSampleType, true);
  const std::vector<Bytes> records = {
      testing::MakeComm(attr, 1, 1, "init", false, kSid), testing::MakeSample(attr, FullSample()),
      testing::MakeMmap2(attr, testing::MakeMmap2Fields("/bin/true"), kSid),
      testing::MakeLost(attr, 1, 2, kSid)};
  Bytes stream;
  for (const Bytes& r : records) testing::Append(stream, r);
  std::vector<Bytes> seen;
  const size_t walked =
      ForEachRecord(stream, [&](const perf_event_header& h, std::span<const std::byte> bytes) {
        EXPECT_EQ(h.size, bytes.size());
        seen.emplace_back(bytes.begin(), bytes.end());
      });
  EXPECT_EQ(walked, stream.size());
  EXPECT_EQ(seen, records);
}

TEST(RecordWalkerTest, StopsAtImpossibleSizes) {
  const auto attr = MakeAttr(kRecorderSampleType, true);
  const Bytes good = testing::MakeLostSamples(attr, 1, kSid);
  for (uint16_t bad_size : {0, 4, 12, 20, 0x7ff8}) {
    Bytes stream = good;
    Bytes bad = good;
    std::memcpy(bad.data() + 6, &bad_size, 2);
    testing::Append(stream, bad);
    testing::Append(stream, good);  // never reached
    int calls = 0;
    const size_t walked = ForEachRecord(stream, [&](const perf_event_header&, auto) { ++calls; });
    EXPECT_EQ(walked, good.size()) << bad_size;
    EXPECT_EQ(calls, 1) << bad_size;
  }
  // A header cut short at the end of the stream.
  Bytes stream = good;
  stream.resize(stream.size() + 5);
  EXPECT_EQ(ForEachRecord(stream, [](const perf_event_header&, auto) {}), good.size());
  EXPECT_EQ(ForEachRecord(std::span<const std::byte>{}, [](const perf_event_header&, auto) {}), 0u);
}

TEST(EventTableTest, PicksEventsByIdentifier) {
  const EventDesc cycles{MakeAttr(kRecorderSampleType, true), "cycles", {11, 12}};
  const EventDesc faults{
      MakeAttr(kRecorderSampleType & ~uint64_t{PERF_SAMPLE_CALLCHAIN}, true), "faults", {21, 22}};
  const EventTable table({cycles, faults});
  ASSERT_EQ(table.events().size(), 2u);
  SampleFields f = FullSample();
  f.id = 22;
  EXPECT_EQ(table.EventIndexFor(testing::MakeSample(faults.attr, f)), 1u);
  f.id = 11;
  EXPECT_EQ(table.EventIndexFor(testing::MakeSample(cycles.attr, f)), 0u);
  f.id = 99;
  EXPECT_EQ(table.EventIndexFor(testing::MakeSample(cycles.attr, f)), std::nullopt);

  SampleIdFields sid = kSid;
  sid.id = 21;
  EXPECT_EQ(table.EventIndexFor(testing::MakeComm(faults.attr, 1, 1, "x", false, sid)), 1u);
  sid.id = 12;
  EXPECT_EQ(
      table.EventIndexFor(testing::MakeMmap2(cycles.attr, testing::MakeMmap2Fields("/a"), sid)),
      0u);
  sid.id = 13;
  EXPECT_EQ(table.EventIndexFor(testing::MakeLost(cycles.attr, 12, 1, sid)), std::nullopt);

  EXPECT_EQ(table.EventIndexForId(12), 0u);
  EXPECT_EQ(table.EventIndexForId(21), 1u);
  EXPECT_EQ(table.EventIndexForId(14), std::nullopt);
  // Id 0 is no kernel event's: a record perf synthesized, the first event's.
  EXPECT_EQ(table.EventIndexForId(0), 0u);
  const Bytes header_only(8);
  EXPECT_EQ(table.EventIndexFor(header_only), std::nullopt);
  EXPECT_EQ(table.EventIndexFor({}), std::nullopt);
}

// Ids come in any order, events one at a time (perf.data's pipe mode);
// an id two events claim stays the first one's, as a map's first insert.
TEST(EventTableTest, IdsInAnyOrderAndTheFirstClaimKept) {
  EventTable table;
  table.Add(EventDesc{MakeAttr(kRecorderSampleType, true), "a", {907, 5, 300, 5}});
  table.Add(EventDesc{MakeAttr(kRecorderSampleType, true), "b", {1, 300, 2000, 6}});
  table.Add(EventDesc{MakeAttr(kRecorderSampleType, true), "c", {}});
  EXPECT_EQ(table.EventIndexForId(5), 0u);
  EXPECT_EQ(table.EventIndexForId(300), 0u);
  EXPECT_EQ(table.EventIndexForId(907), 0u);
  EXPECT_EQ(table.EventIndexForId(1), 1u);
  EXPECT_EQ(table.EventIndexForId(6), 1u);
  EXPECT_EQ(table.EventIndexForId(2000), 1u);
  for (uint64_t missing : {2ull, 7ull, 301ull, 906ull, 2001ull, ~0ull}) {
    EXPECT_EQ(table.EventIndexForId(missing), std::nullopt) << missing;
  }
}

// perf with several events sets PERF_SAMPLE_ID, not IDENTIFIER: the id
// sits after IP, TID, TIME (and ADDR) in a sample, and before STREAM_ID
// and CPU at the end of the trailer.
TEST(EventTableTest, PicksEventsBySampleIdWhereEveryEventPutsIt) {
  EventDesc a, b;
  for (EventDesc* d : {&a, &b}) {
    d->attr.size = sizeof(perf_event_attr);
    d->attr.sample_type =
        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;
    d->attr.sample_id_all = 1;
  }
  b.attr.config = PERF_COUNT_SW_TASK_CLOCK;
  a.ids = {4451, 4452};
  b.ids = {4453};
  const EventTable table({a, b});
  testing::SampleFields fields;
  fields.id = 4453;
  EXPECT_EQ(table.EventIndexFor(testing::MakeSample(b.attr, fields)), 1u);
  fields.id = 4452;
  EXPECT_EQ(table.EventIndexFor(testing::MakeSample(a.attr, fields)), 0u);
  testing::SampleIdFields sid;
  sid.id = 4453;
  EXPECT_EQ(table.EventIndexFor(testing::MakeComm(b.attr, 1, 1, "x", false, sid)), 1u);
  sid.id = 4999;
  EXPECT_EQ(table.EventIndexFor(testing::MakeComm(b.attr, 1, 1, "x", false, sid)), std::nullopt);

  // The events disagree on where the id is: no sample can be told apart.
  b.attr.sample_type |= PERF_SAMPLE_ADDR;
  const EventTable mixed({a, b});
  fields.id = 4452;
  EXPECT_EQ(mixed.EventIndexFor(testing::MakeSample(a.attr, fields)), std::nullopt);
}

TEST(EventTableTest, WithoutIdentifierOnlyUniformEventsResolve) {
  const auto ip_time = MakeAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TIME, true);
  const auto ip_only = MakeAttr(PERF_SAMPLE_IP, true);
  const Bytes r = testing::MakeSample(ip_time, FullSample());
  EXPECT_EQ(EventTable({EventDesc{ip_time, "", {}}, EventDesc{ip_time, "", {}}}).EventIndexFor(r),
            0u);
  EXPECT_EQ(EventTable({EventDesc{ip_time, "", {}}, EventDesc{ip_only, "", {}}}).EventIndexFor(r),
            std::nullopt);
  EXPECT_EQ(EventTable({EventDesc{ip_only, "", {}}}).EventIndexFor(r), 0u);
  EXPECT_EQ(EventTable().EventIndexFor(r), std::nullopt);
  EXPECT_TRUE(EventTable().empty());
}

// The recorder leaves PERF_SAMPLE_CPU out of what the kernel writes and
// inserts it from the ring buffer's CPU: the result must be, byte for byte,
// what the kernel writes with the bit set, for every record kind and
// whether or not the identifier and other fields are there.
TEST(PerfRecordTest, InsertingTheCpuFieldGivesTheKernelsLayoutWithIt) {
  for (uint64_t t : {kAllSampleFields & ~uint64_t{PERF_SAMPLE_CPU},
                     kRecorderSampleType & ~uint64_t{PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER},
                     uint64_t{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME}}) {
    for (bool id_all : {true, false}) {
      const auto without = MakeAttr(t, id_all);
      const auto with = MakeAttr(t | PERF_SAMPLE_CPU, id_all);
      SampleFields sample = FullSample();
      SampleIdFields sid{.pid = 5, .tid = 6, .time = 77, .id = 0x1111, .stream_id = 3, .cpu = 0};
      auto stream = [&](const perf_event_attr& attr) {
        Bytes out;
        testing::Append(out, testing::MakeSample(attr, sample));
        testing::Append(out, testing::MakeComm(attr, 5, 6, "worker", true, sid));
        testing::Append(out, testing::MakeMmap2(attr, testing::MakeMmap2Fields("/bin/x"), sid));
        testing::Append(out, testing::MakeLost(attr, 0x1111, 12, sid));
        testing::Append(out, testing::MakeSample(attr, sample));
        return out;
      };
      sample.cpu = 0;
      const Bytes ring = stream(without);
      sample.cpu = 3;
      sid.cpu = 3;
      const Bytes want = stream(with);
      Bytes got = {std::byte{0xAA}};  // appended to, not replaced
      InsertCpuField(ring, 3, CpuFieldPlaceOf(with), got);
      ASSERT_EQ(got.size(), 1 + want.size()) << t << " " << id_all;
      EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin() + 1)) << t << " " << id_all;
    }
  }
}

TEST(PerfRecordTest, InsertingTheCpuFieldKeepsMalformedBytes) {
  const auto attr = MakeAttr(kRecorderSampleType, true);
  Bytes ring = testing::MakeSample(MakeAttr(kRecorderSampleType & ~uint64_t{PERF_SAMPLE_CPU}, true),
                                   FullSample());
  const size_t good = ring.size();
  // A header claiming more bytes than there are: kept as it came.
  perf_event_header bad{PERF_RECORD_SAMPLE, 0, 64};
  const auto* b = reinterpret_cast<const std::byte*>(&bad);
  ring.insert(ring.end(), b, b + sizeof(bad));
  Bytes got;
  InsertCpuField(ring, 1, CpuFieldPlaceOf(attr), got);
  ASSERT_EQ(got.size(), ring.size() + 8);
  EXPECT_TRUE(std::equal(ring.begin() + good, ring.end(), got.begin() + good + 8));
  auto s = ParseSample(std::span<const std::byte>(got).first(good + 8), attr);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cpu, 1u);
  EXPECT_EQ(s->period, FullSample().period);
}

}  // namespace
}  // namespace sample
