// AppendCompactingStacks: the recorder keeps only the live part (dyn_size)
// of each user stack copy, and the records stay readable, wherever the ring
// buffer's end cuts the stream.
#include <linux/perf_event.h>

#include <cstring>
#include <initializer_list>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/perf/event_table.h"
#include "libsample/perf/perf_record.h"
#include "record/drain/stack_compaction.h"
#include "tests/unit/synthetic_records.h"

namespace sample::record {
namespace {

using testing::Bytes;

constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
                                 PERF_SAMPLE_WEIGHT;

perf_event_attr StackAttr() {
  perf_event_attr attr = testing::MakeAttr(kSampleType, true);
  attr.sample_regs_user = 0b11;
  attr.sample_stack_user = 64;
  return attr;
}

// A sample whose 64-byte stack copy holds `live` bytes, then its weight.
Bytes StackSample(const perf_event_attr& attr, uint64_t live, uint64_t weight) {
  testing::SampleFields f;
  f.ip = 0x401000;
  f.pid = f.tid = 7;
  f.time = 1000 + live;
  f.extra = testing::RegsUserBlock(PERF_SAMPLE_REGS_ABI_64, {0x7ffc0000, 0x401000});
  std::vector<std::byte> stack(64);
  for (size_t i = 0; i < stack.size(); ++i) stack[i] = std::byte(i + 1);
  Bytes block = testing::StackUserBlock(stack, 64);
  std::memcpy(block.data() + 8 + 64, &live, 8);  // dyn_size
  f.extra.insert(f.extra.end(), block.begin(), block.end());
  const auto* w = reinterpret_cast<const std::byte*>(&weight);
  f.extra.insert(f.extra.end(), w, w + 8);
  return testing::MakeSample(attr, f);
}

TEST(StackCompactionTest, StackCopiesShrinkToTheirLivePartAndStayReadable) {
  const perf_event_attr attr = StackAttr();
  EventDesc desc;
  desc.attr = attr;
  const EventTable table(std::vector<EventDesc>{desc});

  const Bytes partial = StackSample(attr, 20, 111);  // 20 live bytes: 24 kept
  const Bytes full = StackSample(attr, 64, 222);     // all live: unchanged
  Bytes other(16);  // a record of another type passes as it is
  const perf_event_header h{PERF_RECORD_COMM, 0, 16};
  std::memcpy(other.data(), &h, sizeof(h));
  other[12] = std::byte{0x5a};

  Bytes in;
  for (const Bytes* r : std::initializer_list<const Bytes*>{&partial, &other, &full})
    in.insert(in.end(), r->begin(), r->end());
  Bytes bytes;
  const size_t kept = AppendCompactingStacks(in, {}, table, bytes);
  ASSERT_EQ(kept, in.size() - 40);
  ASSERT_EQ(bytes.size(), kept);

  size_t at = 0;
  auto next = [&] {
    perf_event_header rh;
    std::memcpy(&rh, bytes.data() + at, sizeof(rh));
    const std::span<const std::byte> r(bytes.data() + at, rh.size);
    at += rh.size;
    return r;
  };
  const auto first = next();
  ASSERT_EQ(first.size(), partial.size() - 40);
  const auto s = ParseSample(first, attr);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->user_stack.size(), 20u);
  EXPECT_EQ(s->user_stack[0], std::byte{1});
  EXPECT_EQ(s->user_stack[19], std::byte{20});
  EXPECT_EQ(s->time, 1020u);
  uint64_t weight = 0;  // the field after the stack moved up with it
  std::memcpy(&weight, first.data() + first.size() - 8, 8);
  EXPECT_EQ(weight, 111u);

  const auto second = next();
  EXPECT_TRUE(std::equal(second.begin(), second.end(), other.begin(), other.end()));
  const auto third = next();
  EXPECT_TRUE(std::equal(third.begin(), third.end(), full.begin(), full.end()));
  EXPECT_EQ(at, kept);
}

TEST(StackCompactionTest, AMalformedTailGoesOnUnchanged) {
  const perf_event_attr attr = StackAttr();
  EventDesc desc;
  desc.attr = attr;
  const EventTable table(std::vector<EventDesc>{desc});
  Bytes bytes = StackSample(attr, 8, 1);
  const size_t first = bytes.size();
  // A header claiming more than is there, then junk.
  const perf_event_header bad{PERF_RECORD_SAMPLE, 0, 4000};
  const auto* b = reinterpret_cast<const std::byte*>(&bad);
  bytes.insert(bytes.end(), b, b + sizeof(bad));
  bytes.insert(bytes.end(), 24, std::byte{0x77});
  const Bytes tail(bytes.begin() + static_cast<std::ptrdiff_t>(first), bytes.end());
  Bytes out;
  const size_t kept = AppendCompactingStacks(bytes, {}, table, out);
  ASSERT_EQ(kept, bytes.size() - 56);  // 64 - 8 bytes of the first copy
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(),
                         out.begin() + static_cast<std::ptrdiff_t>(first - 56)));
}

// A ring buffer hands its bytes over in two parts when they wrap past its
// end, cutting a record (or its header) anywhere: every cut gives the
// output of the uncut stream, appended after what `out` held.
TEST(StackCompactionTest, EveryCutOfTheStreamGivesTheSameRecords) {
  const perf_event_attr attr = StackAttr();
  EventDesc desc;
  desc.attr = attr;
  const EventTable table(std::vector<EventDesc>{desc});
  Bytes in;
  for (uint64_t live : {20u, 64u, 0u, 8u, 41u}) {
    const Bytes r = StackSample(attr, live, live * 3);
    in.insert(in.end(), r.begin(), r.end());
  }
  in.insert(in.end(), 5, std::byte{0x42});  // a partial header at the end
  Bytes whole;
  AppendCompactingStacks(in, {}, table, whole);
  ASSERT_LT(whole.size(), in.size());
  for (size_t cut = 0; cut <= in.size(); ++cut) {
    const std::span<const std::byte> stream(in);
    Bytes out = {std::byte{0xee}};
    const size_t appended =
        AppendCompactingStacks(stream.first(cut), stream.subspan(cut), table, out);
    ASSERT_EQ(appended, whole.size()) << "cut at " << cut;
    ASSERT_EQ(out[0], std::byte{0xee});
    ASSERT_TRUE(std::equal(whole.begin(), whole.end(), out.begin() + 1)) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace sample::record
