// Records for the tests of the codecs that rewrite a sample's user
// registers (user_reg_deltas_test.cc, sample_columns_test.cc): two events,
// one recording AX, BP, SP and IP, and a chunk of samples of both.
#pragma once

#include <linux/perf_event.h>

#include <cstring>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/perf/event_table.h"
#include "libsample/perf/perf_record.h"
#include "tests/unit/synthetic_records.h"

namespace sample::format::reg_samples {

namespace st = sample::testing;
using st::Bytes;

inline constexpr uint64_t kRegsType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
inline constexpr uint64_t kPlainType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
inline constexpr uint64_t kRegsId = 10, kPlainId = 20;

// Event 0 records AX, BP, SP, IP (perf numbers 0, 6, 7, 8): BP is the second
// value, SP the third, IP the fourth. Event 1 records no registers.
inline std::vector<EventDesc> Events() {
  EventDesc regs{st::MakeAttr(kRegsType, true), "cpu-clock", {kRegsId}};
  regs.attr.sample_regs_user = 1u << 0 | 1u << 6 | 1u << 7 | 1u << 8;
  regs.attr.sample_stack_user = 64;
  EventDesc plain{st::MakeAttr(kPlainType, true), "task-clock", {kPlainId}};
  return {regs, plain};
}

struct Regs {
  uint64_t ax, bp, sp, ip;
};

inline Bytes RegsSample(const perf_event_attr& attr, uint32_t tid, uint64_t ip,
                        std::vector<uint64_t> chain, const Regs& r,
                        uint64_t abi = PERF_SAMPLE_REGS_ABI_64) {
  st::SampleFields f;
  f.id = kRegsId;
  f.ip = ip;
  f.pid = tid;
  f.tid = tid;
  f.time = 1000 + tid;
  f.period = 1;
  f.callchain = std::move(chain);
  f.extra = st::RegsUserBlock(abi, abi == PERF_SAMPLE_REGS_ABI_NONE
                                       ? std::vector<uint64_t>{}
                                       : std::vector<uint64_t>{r.ax, r.bp, r.sp, r.ip});
  const std::vector<std::byte> stack(16, std::byte{0x5a});
  const Bytes block = st::StackUserBlock(stack, 16);
  f.extra.insert(f.extra.end(), block.begin(), block.end());
  return st::MakeSample(attr, f);
}

// The four register values of the sample at byte `at` of `records`.
inline Regs RegsAt(const Bytes& records, size_t at, const EventTable& table) {
  const std::span<const std::byte> rest = std::span(records).subspan(at);
  perf_event_header h;
  std::memcpy(&h, rest.data(), sizeof(h));
  const auto sample = ParseSample(rest.first(h.size), table.events()[0].attr);
  EXPECT_TRUE(sample && sample->user_regs.size() == 4);
  if (!sample || sample->user_regs.size() != 4) return {};
  return {sample->user_regs[0], sample->user_regs[1], sample->user_regs[2], sample->user_regs[3]};
}

struct Chunk {
  Bytes records;
  std::vector<size_t> at;  // offsets of the register samples, in order
};

inline Chunk MakeChunk(const EventTable& table) {
  const perf_event_attr& attr = table.events()[0].attr;
  Chunk c;
  auto add = [&](Bytes record, bool regs) {
    if (regs) c.at.push_back(c.records.size());
    c.records.insert(c.records.end(), record.begin(), record.end());
  };
  const uint64_t user = PERF_CONTEXT_USER, kernel = PERF_CONTEXT_KERNEL;
  // Thread 1 in user mode at one depth, then deeper; thread 2 between them;
  // a sample taken in the kernel (user pc from the chain), one of a kernel
  // thread (no registers), and another event's sample.
  add(RegsSample(attr, 1, 0x401000, {user, 0x401000, 0x402000},
                 {7, 0x7ffd1000, 0x7ffd0fc0, 0x401000}),
      true);
  add(RegsSample(attr, 2, 0x501000, {user, 0x501000}, {8, 0x7ffe2040, 0x7ffe2000, 0x501000}), true);
  add(RegsSample(attr, 1, 0x401010, {user, 0x401010, 0x402000},
                 {9, 0x7ffd1000, 0x7ffd0fc0, 0x401010}),
      true);
  add(RegsSample(attr, 1, 0xffffffff81000000, {kernel, 0xffffffff81000000, user, 0x401020},
                 {9, 0x7ffd0f80, 0x7ffd0f40, 0x401020}),
      true);
  add(RegsSample(attr, 3, 0xffffffff81000010, {kernel, 0xffffffff81000010}, {},
                 PERF_SAMPLE_REGS_ABI_NONE),
      false);
  st::SampleFields other;
  other.id = kPlainId;
  other.ip = 0x401000;
  other.tid = 1;
  Bytes plain = st::MakeSample(table.events()[1].attr, other);
  add(plain, false);
  return c;
}

}  // namespace sample::format::reg_samples
