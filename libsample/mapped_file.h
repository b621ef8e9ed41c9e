// MappedFile: a whole file mapped read-only; owns the mapping and unmaps it.
// Empty files map to an empty span.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "libsample/result.h"

namespace sample {

class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);
  // The file open as `fd` (which may be closed afterwards), for a caller
  // that checked it first (owner, mode); `name` for messages. No read-ahead
  // advice: for files read at a few places, not in one pass.
  static Result<MappedFile> Map(int fd, const std::string& name);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }

  // Drops this process's resident pages that lie wholly inside
  // [offset, offset + size) (a page shared with a neighbouring range stays),
  // so that a file read once, chunk by chunk, does not count in the
  // reporter's memory in full. The bytes stay readable: the next read faults
  // them back in from the page cache. Safe while other threads read.
  void Release(uint64_t offset, uint64_t size) const;

 private:
  MappedFile(const std::byte* data, size_t size) : data_(data), size_(size) {}
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sample
