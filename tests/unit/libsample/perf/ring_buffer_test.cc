#include "libsample/perf/ring_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "libsample/perf/record_walker.h"
#include "tests/unit/synthetic_records.h"

namespace sample {
namespace {

using testing::Bytes;

constexpr size_t kDataSize = 4096;

// The metadata page as the kernel maps it: page-aligned, zeroed.
struct alignas(4096) MetaPage {
  perf_event_mmap_page page;
};

// A ring buffer in ordinary memory, written the way the kernel writes it:
// record bytes at head & mask (wrapping at the end of the data area), then a
// release store of the new data_head. The kernel never overwrites bytes the
// reader has not released through data_tail; Write() refuses the same way.
class SyntheticRing {
 public:
  SyntheticRing(uint64_t start, size_t size = kDataSize)
      : meta_(std::make_unique<MetaPage>()), data_(size), size_(size) {
    std::memset(&meta_->page, 0, sizeof(meta_->page));
    meta_->page.data_head = start;
    meta_->page.data_tail = start;
    meta_->page.data_size = size;
    // Fill with a pattern so stale bytes are told apart from zeroes.
    for (size_t i = 0; i < size; ++i) data_[i] = static_cast<std::byte>(0xa5 ^ i);
  }

  RingBuffer Ring() { return RingBuffer(&meta_->page, data_.data(), size_); }
  perf_event_mmap_page& meta() { return meta_->page; }
  const std::byte* data() const { return data_.data(); }

  bool Write(std::span<const std::byte> bytes) {
    const uint64_t head = meta_->page.data_head;
    const uint64_t tail = __atomic_load_n(&meta_->page.data_tail, __ATOMIC_ACQUIRE);
    if (head - tail + bytes.size() > size_) return false;
    for (size_t i = 0; i < bytes.size(); ++i) data_[(head + i) & (size_ - 1)] = bytes[i];
    __atomic_store_n(&meta_->page.data_head, head + bytes.size(), __ATOMIC_RELEASE);
    return true;
  }

 private:
  std::unique_ptr<MetaPage> meta_;
  std::vector<std::byte> data_;
  size_t size_;
};

// A record of exactly `size` bytes (a multiple of 8, >= 16) whose contents
// identify it: a LOST_SAMPLES record padded with `seq`-derived bytes.
Bytes NumberedRecord(uint64_t seq, size_t size) {
  Bytes r(size);
  perf_event_header h{PERF_RECORD_LOST_SAMPLES, 0, static_cast<uint16_t>(size)};
  std::memcpy(r.data(), &h, sizeof(h));
  for (size_t i = sizeof(h); i < size; ++i) r[i] = static_cast<std::byte>(seq * 31 + i);
  return r;
}

std::vector<Bytes> SplitRecords(std::span<const std::byte> stream) {
  std::vector<Bytes> out;
  const size_t walked = ForEachRecord(stream, [&](const perf_event_header&, auto bytes) {
    out.emplace_back(bytes.begin(), bytes.end());
  });
  EXPECT_EQ(walked, stream.size());
  return out;
}

TEST(RingBufferTest, DefaultIsInvalid) {
  RingBuffer ring;
  EXPECT_FALSE(ring.valid());
  SyntheticRing synthetic(0);
  EXPECT_TRUE(synthetic.Ring().valid());
  EXPECT_EQ(synthetic.Ring().size(), kDataSize);
}

TEST(RingBufferTest, EmptyBufferDrainsNothing) {
  for (uint64_t start : {uint64_t{0}, uint64_t{4096 * 7 + 64}}) {
    SyntheticRing synthetic(start);
    RingBuffer ring = synthetic.Ring();
    EXPECT_EQ(ring.Available(), 0u);
    Bytes out = {std::byte{1}, std::byte{2}};
    EXPECT_EQ(ring.Drain(out), 0u);
    EXPECT_EQ(out, (Bytes{std::byte{1}, std::byte{2}}));
    EXPECT_EQ(synthetic.meta().data_tail, start);
  }
}

TEST(RingBufferTest, DrainsRecordsInOrderAndReleasesThem) {
  SyntheticRing synthetic(0);
  RingBuffer ring = synthetic.Ring();
  const auto attr = testing::MakeAttr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                          PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN,
                                      true);
  testing::SampleFields sample;
  sample.ip = 0x401000;
  sample.callchain = {PERF_CONTEXT_USER, 0x401000, 0x402000};
  const std::vector<Bytes> records = {
      testing::MakeComm(attr, 1, 1, "init", true), testing::MakeSample(attr, sample),
      testing::MakeMmap2(attr, testing::MakeMmap2Fields("/bin/init", 1, 1, 0x400000, 0x1000)),
      testing::MakeLost(attr, 5, 12)};
  size_t total = 0;
  for (const Bytes& r : records) {
    ASSERT_TRUE(synthetic.Write(r));
    total += r.size();
  }
  EXPECT_EQ(ring.Available(), total);

  Bytes out = {std::byte{0xee}};  // Drain appends
  ASSERT_EQ(ring.Drain(out), total);
  ASSERT_EQ(out.size(), 1 + total);
  EXPECT_EQ(out[0], std::byte{0xee});
  EXPECT_EQ(SplitRecords(std::span(out).subspan(1)), records);
  EXPECT_EQ(synthetic.meta().data_tail, synthetic.meta().data_head);
  EXPECT_EQ(synthetic.meta().data_tail, total);
  EXPECT_EQ(ring.Available(), 0u);
  EXPECT_EQ(ring.Drain(out), 0u);
  EXPECT_EQ(out.size(), 1 + total);
}

TEST(RingBufferTest, RecordStraddlingTheEndIsReassembled) {
  // The tail sits 24 bytes before the end of the data area.
  const uint64_t start = 5 * kDataSize - 24;
  SyntheticRing synthetic(start);
  RingBuffer ring = synthetic.Ring();
  const Bytes record = NumberedRecord(7, 64);
  ASSERT_TRUE(synthetic.Write(record));
  // The record really is split in memory: 24 bytes at the end, 40 at the start.
  ASSERT_EQ(std::memcmp(synthetic.data() + kDataSize - 24, record.data(), 24), 0);
  ASSERT_EQ(std::memcmp(synthetic.data(), record.data() + 24, 40), 0);

  Bytes out;
  ASSERT_EQ(ring.Drain(out), 64u);
  EXPECT_EQ(out, record);
  EXPECT_EQ(synthetic.meta().data_tail, start + 64);
}

// Peek lends the unread bytes in place, in two parts when they wrap, and
// frees nothing until Consume.
TEST(RingBufferTest, PeekLendsBothPartsAndConsumeFreesThem) {
  const uint64_t start = 5 * kDataSize - 24;
  SyntheticRing synthetic(start);
  RingBuffer ring = synthetic.Ring();
  const Bytes record = NumberedRecord(7, 64);
  ASSERT_TRUE(synthetic.Write(record));
  const RingBuffer::Unread unread = ring.Peek();
  ASSERT_EQ(unread.first.size(), 24u);
  ASSERT_EQ(unread.second.size(), 40u);
  EXPECT_EQ(unread.first.data(), synthetic.data() + kDataSize - 24);
  EXPECT_EQ(unread.second.data(), synthetic.data());
  EXPECT_EQ(unread.head, start + 64);
  EXPECT_EQ(synthetic.meta().data_tail, start);  // not yet freed
  EXPECT_EQ(ring.Available(), 64u);
  ring.Consume(unread.head);
  EXPECT_EQ(synthetic.meta().data_tail, start + 64);
  EXPECT_EQ(ring.Peek().size(), 0u);
}

TEST(RingBufferTest, HeaderStraddlingTheEndIsReassembled) {
  const uint64_t start = 3 * kDataSize - 4;  // the 8-byte header itself is split
  SyntheticRing synthetic(start);
  RingBuffer ring = synthetic.Ring();
  const Bytes record = NumberedRecord(9, 32);
  ASSERT_TRUE(synthetic.Write(record));
  Bytes out;
  ASSERT_EQ(ring.Drain(out), 32u);
  EXPECT_EQ(out, record);
}

TEST(RingBufferTest, ExactlyFullBufferDrainsAll) {
  for (uint64_t start : {uint64_t{0}, uint64_t{kDataSize * 9 + 1000}}) {
    SyntheticRing synthetic(start);
    RingBuffer ring = synthetic.Ring();
    std::vector<Bytes> records;
    for (size_t i = 0; i < kDataSize / 256; ++i) records.push_back(NumberedRecord(i, 256));
    for (const Bytes& r : records) ASSERT_TRUE(synthetic.Write(r));
    ASSERT_EQ(synthetic.meta().data_head - synthetic.meta().data_tail, kDataSize);
    ASSERT_FALSE(synthetic.Write(NumberedRecord(99, 16)));  // the kernel would drop it
    EXPECT_EQ(ring.Available(), kDataSize);

    Bytes out;
    ASSERT_EQ(ring.Drain(out), kDataSize) << start;
    EXPECT_EQ(SplitRecords(out), records) << start;
    EXPECT_EQ(synthetic.meta().data_tail, start + kDataSize);
    EXPECT_EQ(ring.Available(), 0u);
  }
}

// Many produce/drain rounds with u64 positions far above the buffer size,
// crossing 2^32 (and, for robustness, the u64 wrap). Every byte must come out
// once, in order.
TEST(RingBufferTest, ManyRoundsWithLargeCounters) {
  for (uint64_t start : {uint64_t{0}, (uint64_t{1} << 32) - 104, (uint64_t{1} << 32) - 100,
                         ~uint64_t{0} - 3 * kDataSize + 1}) {
    SyntheticRing synthetic(start);
    RingBuffer ring = synthetic.Ring();
    std::mt19937_64 rng(start);
    Bytes written, drained;
    uint64_t seq = 0;
    for (int round = 0; round < 300; ++round) {
      // Fill up to a random level, sometimes to the brim.
      const size_t target = round % 5 == 0 ? kDataSize : rng() % kDataSize;
      for (;;) {
        const size_t size = 8 * (2 + rng() % 40);
        const Bytes r = NumberedRecord(seq, size);
        const uint64_t used = synthetic.meta().data_head - synthetic.meta().data_tail;
        if (used + size > target || !synthetic.Write(r)) break;
        testing::Append(written, r);
        ++seq;
      }
      const size_t available = ring.Available();
      EXPECT_EQ(available, synthetic.meta().data_head - synthetic.meta().data_tail);
      ASSERT_EQ(ring.Drain(drained), available) << "round " << round;
      ASSERT_EQ(synthetic.meta().data_tail, synthetic.meta().data_head) << "round " << round;
      ASSERT_EQ(drained.size(), written.size()) << "round " << round;
    }
    EXPECT_EQ(synthetic.meta().data_head - start, written.size());
    EXPECT_GT(written.size(), 100 * kDataSize);
    EXPECT_TRUE(drained == written) << "start " << start;
    EXPECT_EQ(SplitRecords(drained).size(), seq);
  }
}

TEST(RingBufferTest, AvailableTracksHeadMinusTail) {
  SyntheticRing synthetic((uint64_t{1} << 32) - 8);
  RingBuffer ring = synthetic.Ring();
  ASSERT_TRUE(synthetic.Write(NumberedRecord(1, 40)));
  EXPECT_EQ(ring.Available(), 40u);
  ASSERT_TRUE(synthetic.Write(NumberedRecord(2, 24)));
  EXPECT_EQ(ring.Available(), 64u);
  Bytes out;
  ASSERT_EQ(ring.Drain(out), 64u);
  EXPECT_EQ(ring.Available(), 0u);
}

// A head more than the buffer size ahead of the tail cannot come from a sane
// kernel; the reader takes the newest `size` bytes and catches up.
TEST(RingBufferTest, ImpossibleHeadIsTreatedAsAFullBuffer) {
  const uint64_t start = 10 * kDataSize + 512;
  SyntheticRing synthetic(start);
  RingBuffer ring = synthetic.Ring();
  const uint64_t head = start + kDataSize + 8;  // the smallest impossible head
  synthetic.meta().data_head = head;
  EXPECT_EQ(ring.Available(), kDataSize);
  Bytes out;
  ASSERT_EQ(ring.Drain(out), kDataSize);
  // The newest kDataSize bytes end at head & mask.
  Bytes expected;
  for (uint64_t pos = head - kDataSize; pos != head; ++pos) {
    expected.push_back(synthetic.data()[pos & (kDataSize - 1)]);
  }
  EXPECT_EQ(out, expected);
  EXPECT_EQ(synthetic.meta().data_tail, head);
}

TEST(RingBufferTest, OtherBufferSizes) {
  for (size_t size : {size_t{8}, size_t{64}, size_t{1} << 16}) {
    // `size` bytes written from 8 bytes before the end: wrapped and full.
    SyntheticRing synthetic(size * 3 - 8, size);
    RingBuffer ring = synthetic.Ring();
    Bytes bytes(size);
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>(i * 7 + size);
    ASSERT_TRUE(synthetic.Write(bytes));
    EXPECT_EQ(ring.Available(), size);
    Bytes out;
    ASSERT_EQ(ring.Drain(out), size);
    EXPECT_TRUE(out == bytes) << size;
  }
}

}  // namespace
}  // namespace sample
