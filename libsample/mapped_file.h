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

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  MappedFile(const std::byte* data, size_t size) : data_(data), size_(size) {}
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sample
