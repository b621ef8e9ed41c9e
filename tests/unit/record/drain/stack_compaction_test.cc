// AppendCompactingStacks: the recorder keeps only the live part (dyn_size)
// of each user stack copy, and the records stay readable, wherever the ring
// buffer's end cuts the stream.
#include <linux/perf_event.h>

#include <cstring>
#include <initializer_list>
#include <optional>
#include <utility>
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
  Bytes other(16);                                   // a record of another type passes as it is
  const perf_event_header h{PERF_RECORD_COMM, 0, 16};
  std::memcpy(other.data(), &h, sizeof(h));
  other[12] = std::byte{0x5a};

  Bytes in;
  for (const Bytes* r : std::initializer_list<const Bytes*>{&partial, &other, &full})
    in.insert(in.end(), r->begin(), r->end());
  Bytes bytes;
  const size_t kept = AppendCompactingStacks(in, {}, table, 127, bytes);
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
  const size_t kept = AppendCompactingStacks(bytes, {}, table, 127, out);
  ASSERT_EQ(kept, bytes.size() - 56);  // 64 - 8 bytes of the first copy
  EXPECT_TRUE(
      std::equal(tail.begin(), tail.end(), out.begin() + static_cast<std::ptrdiff_t>(first - 56)));
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
  AppendCompactingStacks(in, {}, table, 127, whole);
  ASSERT_LT(whole.size(), in.size());
  for (size_t cut = 0; cut <= in.size(); ++cut) {
    const std::span<const std::byte> stream(in);
    Bytes out = {std::byte{0xee}};
    const size_t appended =
        AppendCompactingStacks(stream.first(cut), stream.subspan(cut), table, 127, out);
    ASSERT_EQ(appended, whole.size()) << "cut at " << cut;
    ASSERT_EQ(out[0], std::byte{0xee});
    ASSERT_TRUE(std::equal(whole.begin(), whole.end(), out.begin() + 1)) << "cut at " << cut;
  }
}

// fp,leaf (-g): a chain and a 64-byte copy, all live, then a weight.
constexpr uint64_t kLeafSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                     PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                                     PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT;
constexpr uint64_t kUser = static_cast<uint64_t>(PERF_CONTEXT_USER);
constexpr uint64_t kKernel = static_cast<uint64_t>(PERF_CONTEXT_KERNEL);
constexpr uint64_t kCaller = 0x401234;  // the chain's first user caller

perf_event_attr LeafAttr(bool dwarf = false) {
  perf_event_attr attr = testing::MakeAttr(kLeafSampleType, true);
  attr.sample_regs_user = 0b11;
  attr.sample_stack_user = 64;
  attr.exclude_callchain_user = dwarf;  // what tells dwarf from fp,leaf
  return attr;
}

// The copy's words are 0x1000 + i, but `words` put at their indexes.
Bytes LeafSample(const perf_event_attr& attr, std::vector<uint64_t> chain,
                 std::initializer_list<std::pair<size_t, uint64_t>> words, uint64_t live = 64,
                 uint64_t abi = PERF_SAMPLE_REGS_ABI_64) {
  testing::SampleFields f;
  f.ip = 0x401000;
  f.pid = f.tid = 7;
  f.time = 1000;
  f.callchain = std::move(chain);
  f.extra = testing::RegsUserBlock(abi, {0x7ffc0000, 0x401000});
  std::vector<uint64_t> stack(8);
  for (size_t i = 0; i < stack.size(); ++i) stack[i] = 0x1000 + i;
  for (const auto& [index, value] : words) stack[index] = value;
  const auto* b = reinterpret_cast<const std::byte*>(stack.data());
  Bytes block = testing::StackUserBlock(std::span<const std::byte>(b, 64), 64);
  std::memcpy(block.data() + 8 + 64, &live, 8);  // dyn_size
  f.extra.insert(f.extra.end(), block.begin(), block.end());
  const uint64_t weight = 99;
  const auto* w = reinterpret_cast<const std::byte*>(&weight);
  f.extra.insert(f.extra.end(), w, w + 8);
  return testing::MakeSample(attr, f);
}

struct Compacted {
  Bytes bytes;
  std::optional<SampleRecord> sample;
  uint64_t size = 0;      // the copy's size field
  uint64_t dyn_size = 0;  // and its dyn_size
  uint64_t weight = 0;    // the field after them
};

Compacted Compact(const perf_event_attr& attr, const Bytes& in, uint32_t max_stack = 127) {
  EventDesc desc;
  desc.attr = attr;
  const EventTable table(std::vector<EventDesc>{desc});
  Compacted c;
  const size_t kept = AppendCompactingStacks(in, {}, table, max_stack, c.bytes);
  EXPECT_EQ(kept, c.bytes.size());
  perf_event_header h;
  std::memcpy(&h, c.bytes.data(), sizeof(h));
  EXPECT_EQ(h.size, c.bytes.size());
  c.sample = ParseSample(c.bytes, attr);
  if (!c.sample) return c;
  const std::byte* data = c.sample->user_stack.data();
  std::memcpy(&c.size, data - 8, 8);
  std::memcpy(&c.dyn_size, data + c.size, 8);
  std::memcpy(&c.weight, c.bytes.data() + c.bytes.size() - 8, 8);
  return c;
}

uint64_t Word(const SampleRecord& s, size_t i) {
  uint64_t w;
  std::memcpy(&w, s.user_stack.data() + i * 8, 8);
  return w;
}

TEST(StackCompactionTest, LeafCopiesEndAfterTheSlotOfTheChainsFirstCaller) {
  const perf_event_attr attr = LeafAttr();
  // The caller in the fourth word (and again higher up: the first is the
  // one the report's steps stop at); below it a saved frame pointer, a
  // counter and a negative number.
  const Bytes in =
      LeafSample(attr, {kUser, 0x401000, kCaller, 0x402000},
                 {{0, 0x7ffc0040}, {1, 5}, {2, uint64_t(-256)}, {3, kCaller}, {6, kCaller}});
  const Compacted c = Compact(attr, in);
  ASSERT_TRUE(c.sample.has_value());
  EXPECT_EQ(c.bytes.size(), in.size() - 32);
  ASSERT_EQ(c.sample->user_stack.size(), 32u);
  EXPECT_EQ(c.size, 32u);  // perf's parser needs dyn_size <= size
  EXPECT_EQ(c.dyn_size, 32u);
  // Words that cannot be user addresses are cleared; addresses stay.
  EXPECT_EQ(Word(*c.sample, 0), 0x7ffc0040u);
  EXPECT_EQ(Word(*c.sample, 1), 0u);
  EXPECT_EQ(Word(*c.sample, 2), 0u);
  EXPECT_EQ(Word(*c.sample, 3), kCaller);
  EXPECT_EQ(c.weight, 99u);
  ASSERT_EQ(c.sample->callchain.size(), 4u);
  EXPECT_EQ(c.sample->callchain[2], kCaller);
}

// An i386 process's word is two 4-byte slots: a return address beside a
// small saved register stays; a 64-bit word up to 2^56 (5-level paging)
// stays too.
TEST(StackCompactionTest, ClearingKeepsI386SlotsAndHighUserAddresses) {
  const perf_event_attr attr = LeafAttr();
  constexpr uint64_t kCaller32 = 0x0804b000;
  const Bytes in32 = LeafSample(attr, {kUser, 0x08049000, kCaller32},
                                {{0, uint64_t{0x0804a123} << 32 | 5}, {1, 7}, {2, kCaller32}}, 64,
                                PERF_SAMPLE_REGS_ABI_32);
  const Compacted c32 = Compact(attr, in32);
  ASSERT_TRUE(c32.sample.has_value());
  ASSERT_EQ(c32.size, 24u);
  EXPECT_EQ(Word(*c32.sample, 0), uint64_t{0x0804a123} << 32 | 5);
  EXPECT_EQ(Word(*c32.sample, 1), 0u);
  EXPECT_EQ(Word(*c32.sample, 2), kCaller32);

  const uint64_t high = uint64_t{1} << 50;  // mapped above 47 bits
  const Compacted c64 =
      Compact(attr, LeafSample(attr, {kUser, 0x401000, kCaller}, {{0, high}, {1, kCaller}}));
  ASSERT_TRUE(c64.sample.has_value());
  EXPECT_EQ(Word(*c64.sample, 0), high);
}

TEST(StackCompactionTest, KernelSamplesCutAtTheirFirstUserCaller) {
  const perf_event_attr attr = LeafAttr();
  const Bytes in =
      LeafSample(attr, {kKernel, 0xffffffff81000000, kUser, 0x401000, kCaller}, {{0, kCaller}}, 40);
  const Compacted c = Compact(attr, in);
  ASSERT_TRUE(c.sample.has_value());
  EXPECT_EQ(c.size, 8u);
  EXPECT_EQ(c.dyn_size, 8u);
  EXPECT_EQ(c.weight, 99u);
}

TEST(StackCompactionTest, LeafCopiesWithoutTheCallerKeepTheirLivePart) {
  const perf_event_attr attr = LeafAttr();
  // Not in the copy; past its live part; no caller in the chain.
  for (const auto& [in, kept] :
       {std::pair{LeafSample(attr, {kUser, 0x401000, kCaller}, {}), 64u},
        std::pair{LeafSample(attr, {kUser, 0x401000, kCaller}, {{5, kCaller}}, 36), 40u},
        std::pair{LeafSample(attr, {kUser, 0x401000}, {{1, kCaller}}), 64u},
        std::pair{LeafSample(attr, {kKernel, 0xffffffff81000000}, {{1, kCaller}}), 64u}}) {
    const Compacted c = Compact(attr, in);
    ASSERT_TRUE(c.sample.has_value());
    EXPECT_EQ(c.size, kept);
    EXPECT_EQ(c.weight, 99u);
    EXPECT_EQ(Word(*c.sample, 0), 0x1000u);  // a copy the report may walk whole is as it was
  }
}

TEST(StackCompactionTest, ChainsCutAtTheKernelsLimitKeepTheirCopy) {
  // The report completes such a chain by unwinding the whole copy.
  perf_event_attr attr = LeafAttr();
  const Bytes in = LeafSample(attr, {kUser, 0x401000, kCaller, 0x402000}, {{1, kCaller}});
  EXPECT_EQ(Compact(attr, in, 3).size, 64u);  // three frames: the host's limit
  EXPECT_EQ(Compact(attr, in, 4).size, 16u);
  attr.sample_max_stack = 3;  // the event's own limit comes first
  EXPECT_EQ(
      Compact(attr, LeafSample(attr, {kUser, 0x401000, kCaller, 0x402000}, {{1, kCaller}}), 127)
          .size,
      64u);
}

TEST(StackCompactionTest, DwarfCopiesAreNotCutAtTheCaller) {
  // The DWARF walk reads on past any one return address.
  const perf_event_attr attr = LeafAttr(/*dwarf=*/true);
  const Bytes in = LeafSample(attr, {kUser, 0x401000, kCaller}, {{1, kCaller}}, 48);
  const Compacted c = Compact(attr, in);
  ASSERT_TRUE(c.sample.has_value());
  EXPECT_EQ(c.size, 48u);
}

}  // namespace
}  // namespace sample::record
