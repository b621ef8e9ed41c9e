#include "libsample/perf/ring_buffer.h"

#include <algorithm>
#include <cstring>

namespace sample {
namespace {

// Acquire pairs with the kernel's release store of data_head (perf_output_put_handle):
// every record byte before head is visible once we have seen head.
uint64_t LoadHead(const perf_event_mmap_page* meta) {
  return __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
}

}  // namespace

size_t RingBuffer::Available() const {
  const uint64_t head = LoadHead(meta_);
  // data_tail is written only by us, so a plain read is enough.
  return std::min<uint64_t>(head - meta_->data_tail, size_);
}

RingBuffer::Unread RingBuffer::Peek() const {
  Unread unread;
  unread.head = LoadHead(meta_);
  uint64_t tail = meta_->data_tail;
  uint64_t available = unread.head - tail;
  if (available == 0) return unread;
  if (available > size_) {
    tail = unread.head - size_;
    available = size_;
  }
  const size_t start = tail & (size_ - 1);
  const size_t first = std::min<size_t>(available, size_ - start);
  unread.first = std::span<const std::byte>(data_ + start, first);
  unread.second = std::span<const std::byte>(data_, available - first);
  return unread;
}

void RingBuffer::Consume(uint64_t head) {
  // Release orders our reads of the records before the kernel can observe
  // the new tail and overwrite the space (it reads data_tail with acquire
  // semantics in perf_output_begin).
  __atomic_store_n(&meta_->data_tail, head, __ATOMIC_RELEASE);
}

size_t RingBuffer::Drain(std::vector<std::byte>& out) {
  const Unread unread = Peek();
  if (unread.size() == 0) return 0;
  // insert, not resize and copy: resize would zero the bytes first, a
  // second pass over all of them (840 MB/s at 50 kHz with 8 KiB stacks).
  out.insert(out.end(), unread.first.begin(), unread.first.end());
  out.insert(out.end(), unread.second.begin(), unread.second.end());
  Consume(unread.head);
  return unread.size();
}

}  // namespace sample
