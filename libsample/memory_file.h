// MemoryFile: bytes held in an anonymous in-memory file (memfd_create), with
// a path that opens it. libelf and libdw read ELF through a path or an fd,
// and the symbolizer stack is built on paths; a file that exists only as
// bytes (the [vdso] image stored in a recording, a fuzz input) goes through
// the same code this way instead of through a temporary file on disk, which
// could be left behind or read by someone else. Owns the fd; move-only.
#pragma once

#include <span>
#include <string>

#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample {

class MemoryFile {
 public:
  // A file holding a copy of `bytes`; `name` shows in /proc/PID/fd only.
  static Result<MemoryFile> Create(const std::string& name, std::span<const std::byte> bytes);

  // Replaces the contents with `bytes` (for reusing one file per fuzz input).
  Result<void> Assign(std::span<const std::byte> bytes);

  // "/proc/self/fd/N": opens the file, from any thread of this process.
  const std::string& path() const { return path_; }

 private:
  MemoryFile(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  UniqueFd fd_;
  std::string path_;
};

}  // namespace sample
