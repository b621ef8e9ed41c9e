// Walks a byte stream of concatenated perf records (a drained ring buffer or
// a records chunk), calling `fn(header, record_bytes)` for each. Stops at
// the first record whose size is impossible (0, not a multiple of 8, or past
// the end) and returns the number of bytes walked, so the caller can count
// the rest as malformed.
#pragma once

#include <linux/perf_event.h>

#include <cstring>
#include <span>

namespace sample {

template <typename Fn>
size_t ForEachRecord(std::span<const std::byte> bytes, Fn&& fn) {
  size_t pos = 0;
  while (bytes.size() - pos >= sizeof(perf_event_header)) {
    perf_event_header header;
    std::memcpy(&header, bytes.data() + pos, sizeof(header));
    if (header.size < sizeof(header) || header.size % 8 != 0 || header.size > bytes.size() - pos) {
      break;
    }
    fn(header, bytes.subspan(pos, header.size));
    pos += header.size;
  }
  return pos;
}

}  // namespace sample
