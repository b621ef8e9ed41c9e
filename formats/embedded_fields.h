// The fields the embedded chunk layouts (sample_file_format.h) are made
// of: LEB128 varints (unsigned, and zigzag-signed), strings as a varint
// size and bytes; on the reading side, counts bounded by the bytes left
// and a charge of the memory the decoded tables take against a limit,
// errors naming the field and its file offset. Used by embedded_codec.cc
// (and the writers by sample_columns.cc).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "libsample/byte_reader.h"
#include "libsample/result.h"

namespace sample::format {

inline void PutVarint(std::vector<std::byte>& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<std::byte>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<std::byte>(value));
}

// Zigzag: 0, -1, 1, -2, ... as 0, 1, 2, 3, ..., so small negatives stay short.
inline void PutSigned(std::vector<std::byte>& out, int64_t value) {
  const auto bits = static_cast<uint64_t>(value);
  PutVarint(out, (bits << 1) ^ (value < 0 ? ~uint64_t{0} : 0));
}

inline void PutBytes(std::vector<std::byte>& out, const void* data, size_t size) {
  const size_t old = out.size();
  out.resize(old + size);
  if (size != 0) std::memcpy(out.data() + old, data, size);
}

inline void PutString(std::vector<std::byte>& out, std::string_view text) {
  PutVarint(out, text.size());
  PutBytes(out, text.data(), text.size());
}

// Reads the fields of one payload: varints, strings and counts, each
// checked against the bytes left, and counts the memory the decoded tables
// take against a limit. Errors name the field and its file offset.
class FieldReader {
 public:
  FieldReader(std::span<const std::byte> payload, uint64_t payload_offset, uint64_t memory_limit)
      : in_(payload, payload_offset), memory_limit_(memory_limit) {}

  uint64_t offset() const { return in_.file_offset(); }
  // The memory charged so far.
  uint64_t used() const { return used_; }
  size_t remaining() const { return in_.remaining(); }

  static tl::unexpected<Error> Problem(uint64_t offset, std::string_view field,
                                       std::string_view problem) {
    return Fail(fmt::format("{} at offset {}: {}", field, offset, problem));
  }

  Result<uint64_t> Varint(std::string_view field) {
    const uint64_t start = offset();
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      uint8_t byte = 0;
      if (!in_.Read(&byte)) return Problem(start, field, "truncated");
      if (shift == 63 && byte > 1) break;
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return Problem(start, field, "a varint over 64 bits");
  }
  Result<int64_t> Signed(std::string_view field) {
    TRY_ASSIGN(const uint64_t zigzag, Varint(field));
    return static_cast<int64_t>((zigzag >> 1) ^ (0 - (zigzag & 1)));
  }
  Result<uint32_t> Varint32(std::string_view field) {
    const uint64_t start = offset();
    TRY_ASSIGN(const uint64_t value, Varint(field));
    if (value > std::numeric_limits<uint32_t>::max()) {
      return Problem(start, field, fmt::format("{} is over 32 bits", value));
    }
    return static_cast<uint32_t>(value);
  }
  // Flags with no bit outside `known`.
  Result<uint64_t> Flags(std::string_view field, uint64_t known) {
    const uint64_t start = offset();
    TRY_ASSIGN(const uint64_t flags, Varint(field));
    if ((flags & ~known) != 0)
      return Problem(start, field, fmt::format("unknown bits {:#x}", flags));
    return flags;
  }
  // A count of entries of at least `min_size` bytes each, that the bytes
  // left can hold, and whose `element_size`-byte elements fit the memory
  // (of at most `kept` of them: the rest are read and dropped).
  Result<uint64_t> Count(std::string_view field, size_t min_size, size_t element_size,
                         uint64_t kept = UINT64_MAX) {
    const uint64_t start = offset();
    TRY_ASSIGN(const uint64_t count, Varint(field));
    if (count > remaining() / min_size) {
      return Problem(
          start, field,
          fmt::format("{} entries, more than the {} bytes left can hold", count, remaining()));
    }
    TRY(Charge(std::min(count, kept), element_size, start, field));
    return count;
  }
  // `size` bytes, sized by the field at `start`.
  Result<std::span<const std::byte>> Bytes(uint64_t size, uint64_t start, std::string_view field) {
    std::span<const std::byte> bytes;
    if (size > remaining() || !in_.ReadBytes(size, &bytes)) {
      return Problem(start, field,
                     fmt::format("{} bytes claimed, more than the {} left", size, remaining()));
    }
    return bytes;
  }
  Result<std::string_view> String(std::string_view field) {
    const uint64_t start = offset();
    TRY_ASSIGN(const uint64_t size, Varint(field));
    TRY_ASSIGN(const auto bytes, Bytes(size, start, field));
    return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  // Counts `count` elements of `size` (> 0) bytes against the memory limit.
  Result<void> Charge(uint64_t count, uint64_t size, uint64_t start, std::string_view field) {
    if (count > (memory_limit_ - used_) / size) {
      return Problem(start, field,
                     fmt::format("the decoded tables would take more than the {} bytes of memory "
                                 "allowed",
                                 memory_limit_));
    }
    used_ += count * size;
    return {};
  }

 private:
  ByteReader in_;
  uint64_t memory_limit_;
  uint64_t used_ = 0;
};

}  // namespace sample::format
