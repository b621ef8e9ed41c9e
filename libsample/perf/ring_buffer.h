// RingBuffer: the consumer side of one perf mmap ring buffer.
//
// The kernel appends records at data_head; we copy out everything between
// data_tail and data_head and then publish the new data_tail. Because the
// bytes between tail and head form one contiguous logical stream, copying
// them with at most two memcpys (the part before the buffer end, then the
// part from the start) reassembles any record that wraps past the end
// without looking at record boundaries. Owns nothing: the memory belongs to
// the PerfEvent that mapped it (or to a test).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sample {

class RingBuffer {
 public:
  RingBuffer() = default;
  // `data` is the data area (data_size bytes, a power of two) that follows
  // the metadata page in the mapping.
  RingBuffer(perf_event_mmap_page* meta, std::byte* data, size_t data_size)
      : meta_(meta), data_(data), size_(data_size) {}

  bool valid() const { return meta_ != nullptr; }
  size_t size() const { return size_; }

  // Bytes the kernel has written that we have not consumed.
  size_t Available() const;

  // Appends every complete record to `out` and frees their space in the
  // buffer. Returns the number of bytes appended; 0 when empty. A head that
  // is more than the buffer size ahead of the tail cannot come from a sane
  // kernel; it is treated as a full buffer.
  size_t Drain(std::vector<std::byte>& out);

  // The unconsumed bytes without copying them: up to the end of the
  // buffer, then from its start (empty unless they wrap). The kernel does
  // not touch them until Consume(head) frees them, which a reader that
  // copies only parts of records (the recorder's stack compaction) calls
  // once done.
  struct Unread {
    std::span<const std::byte> first;
    std::span<const std::byte> second;
    uint64_t head = 0;
    size_t size() const { return first.size() + second.size(); }
  };
  Unread Peek() const;
  void Consume(uint64_t head);

 private:
  perf_event_mmap_page* meta_ = nullptr;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sample
