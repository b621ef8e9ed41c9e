// ByteReader: the one way untrusted bytes are read.
//
// A cursor over a span of bytes that knows where the span sits in its file
// (base_offset), so a failed read can be reported as "offset N". Every read
// checks `position + size` against the end without overflow; a failed read
// leaves the cursor where it was. Reads use memcpy, so the data need not be
// aligned. Owns nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

namespace sample {

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> data, uint64_t base_offset = 0)
      : data_(data), base_offset_(base_offset) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool empty() const { return pos_ == data_.size(); }
  // Offset of the cursor in the underlying file, for error messages.
  uint64_t file_offset() const { return base_offset_ + pos_; }

  template <typename T>
  bool Read(T* out) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (sizeof(T) > remaining()) return false;
    std::memcpy(out, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }

  bool ReadBytes(size_t size, std::span<const std::byte>* out) {
    if (size > remaining()) return false;
    *out = data_.subspan(pos_, size);
    pos_ += size;
    return true;
  }

  // A string of `size` bytes; the string ends at its first NUL, if any.
  bool ReadString(size_t size, std::string_view* out) {
    std::span<const std::byte> bytes;
    if (!ReadBytes(size, &bytes)) return false;
    const char* chars = reinterpret_cast<const char*>(bytes.data());
    *out = std::string_view(chars, strnlen(chars, bytes.size()));
    return true;
  }

  bool Skip(size_t size) {
    if (size > remaining()) return false;
    pos_ += size;
    return true;
  }

  bool Seek(size_t position) {
    if (position > data_.size()) return false;
    pos_ = position;
    return true;
  }

 private:
  std::span<const std::byte> data_;
  uint64_t base_offset_;
  size_t pos_ = 0;
};

}  // namespace sample
