#include "libsample/memory_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sample {

Result<MemoryFile> MemoryFile::Create(const std::string& name, std::span<const std::byte> bytes) {
  UniqueFd fd(memfd_create(name.c_str(), MFD_CLOEXEC));
  if (!fd.valid()) return Fail(fmt::format("memfd_create: {}", std::strerror(errno)), errno);
  const std::string path = fmt::format("/proc/self/fd/{}", fd.get());
  MemoryFile file(std::move(fd), path);
  TRY(file.Assign(bytes));
  return file;
}

Result<void> MemoryFile::Assign(std::span<const std::byte> bytes) {
  if (ftruncate(fd_.get(), 0) != 0) {
    return Fail(fmt::format("{}: ftruncate: {}", path_, std::strerror(errno)), errno);
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        pwrite(fd_.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail(fmt::format("{}: write: {}", path_, std::strerror(errno)), errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace sample
