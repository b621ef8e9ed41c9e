#include "libsample/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "libsample/regular_file.h"
#include "libsample/unique_fd.h"

namespace sample {

Result<MappedFile> MappedFile::Open(const std::string& path) {
  // A FIFO or a device given as -i would block or never end.
  auto opened = OpenRegularFile(path);
  if (!opened) return Fail(fmt::format("cannot read {}", opened.error().message));
  TRY_ASSIGN(MappedFile file, Map(opened->get(), path));
  // Reads are mostly one sequential pass.
  if (file.size_ != 0) madvise(const_cast<std::byte*>(file.data_), file.size_, MADV_SEQUENTIAL);
  return file;
}

Result<MappedFile> MappedFile::Map(int fd, const std::string& name) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return Fail(fmt::format("{}: fstat: {}", name, strerror(errno)));
  if (st.st_size == 0) return MappedFile(nullptr, 0);
  void* map = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return Fail(fmt::format("{}: mmap: {}", name, strerror(errno)));
  return MappedFile(static_cast<const std::byte*>(map), static_cast<size_t>(st.st_size));
}

void MappedFile::Release(uint64_t offset, uint64_t size) const {
  if (offset >= size_) return;
  size = std::min<uint64_t>(size, size_ - offset);
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data_) + offset;
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + size) / page * page;
  if (last <= first) return;
  // A private, never written, file mapping: the pages come back unchanged.
  madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(const_cast<std::byte*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace sample
