// ChooseRingPages: rings sized from the data rate of stack copies when -m is
// not given, within the memory limits.
#include "record/events/ring_size.h"

#include <linux/perf_event.h>

#include <vector>

#include <gtest/gtest.h>

namespace sample::record {
namespace {

perf_event_attr DwarfAttr(uint64_t frequency, uint32_t stack) {
  perf_event_attr attr{};
  attr.freq = 1;
  attr.sample_freq = frequency;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  attr.sample_regs_user = 0xff;  // 8 registers: 64 bytes
  attr.sample_stack_user = stack;
  return attr;
}

RingLimits Root(size_t rings) {
  RingLimits limits;
  limits.page_size = 4096;
  limits.rings = rings;
  limits.memory_bytes = uint64_t{8} << 30;
  limits.may_lock_more = true;
  return limits;
}

TEST(RingSizeTest, OnlyStackCopiesAtAFrequencyHaveARate) {
  EXPECT_EQ(StackCopyBytesPerSecond({DwarfAttr(1000, 8192)}), 1000u * (8192 + 256 + 64));
  perf_event_attr period = DwarfAttr(1000, 8192);
  period.freq = 0;  // a sample every 1000 events: no rate
  perf_event_attr chains{};
  chains.freq = 1;
  chains.sample_freq = 50000;
  chains.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
  EXPECT_EQ(StackCopyBytesPerSecond({period, chains}), 0u);
  // Two events on one CPU add up.
  EXPECT_EQ(StackCopyBytesPerSecond({DwarfAttr(1000, 8192), DwarfAttr(1000, 8192)}),
            2000u * (8192 + 256 + 64));
}

TEST(RingSizeTest, TheRingHoldsTenMillisecondsOfStackCopies) {
  // The default 4 kHz with 8 KiB copies: 340 KB in 10 ms, perf's 512 KiB.
  EXPECT_EQ(ChooseRingPages(StackCopyBytesPerSecond({DwarfAttr(4000, 8192)}), Root(2)),
            kDefaultRingPages);
  // 10 kHz: 851 KB -> 1 MiB; 20 kHz: 1.7 MB -> 2 MiB; 50 kHz: 4.3 MB -> 8 MiB.
  EXPECT_EQ(ChooseRingPages(StackCopyBytesPerSecond({DwarfAttr(10000, 8192)}), Root(2)), 256u);
  EXPECT_EQ(ChooseRingPages(StackCopyBytesPerSecond({DwarfAttr(20000, 8192)}), Root(2)), 512u);
  EXPECT_EQ(ChooseRingPages(StackCopyBytesPerSecond({DwarfAttr(50000, 8192)}), Root(2)), 2048u);
  // fp,leaf's 512-byte copies at 50 kHz: 416 KB -> 512 KiB.
  EXPECT_EQ(ChooseRingPages(StackCopyBytesPerSecond({DwarfAttr(50000, 512)}), Root(2)), 128u);
  EXPECT_EQ(ChooseRingPages(0, Root(2)), kDefaultRingPages);
}

TEST(RingSizeTest, ChosenRingsStayWithinTheMemoryLimits) {
  const uint64_t huge = uint64_t{10} << 30;  // 10 GB a second
  // One ring: at most 8 MiB.
  EXPECT_EQ(ChooseRingPages(huge, Root(1)) * 4096, kLargestChosenRingBytes);
  // 64 rings: 256 MiB in all, 4 MiB each.
  EXPECT_EQ(ChooseRingPages(huge, Root(64)) * 4096 * 64, kLargestChosenTotalBytes);
  // 1 GiB of memory: a sixteenth, 64 MiB, over 64 rings is 1 MiB each.
  RingLimits small = Root(64);
  small.memory_bytes = uint64_t{1} << 30;
  EXPECT_EQ(ChooseRingPages(huge, small), 256u);
  // Never below the default, however many rings.
  EXPECT_EQ(ChooseRingPages(huge, Root(100000)), kDefaultRingPages);
  // Without CAP_IPC_LOCK, the default, which the kernel's allowance covers.
  RingLimits unprivileged = Root(2);
  unprivileged.may_lock_more = false;
  EXPECT_EQ(ChooseRingPages(huge, unprivileged), kDefaultRingPages);
}

}  // namespace
}  // namespace sample::record
