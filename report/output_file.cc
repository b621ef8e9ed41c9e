#include "report/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "libsample/regular_file.h"
#include "libsample/unique_fd.h"

namespace sample::report {
namespace {

Error WriteError(const std::string& path, const char* what) {
  const int err = errno;
  return Error{fmt::format("-o {}: cannot {}: {}", path, what, std::strerror(err)), err};
}

Result<void> WriteAll(int fd, const std::string& path, std::string_view bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return tl::unexpected(WriteError(path, "write it"));
    done += static_cast<size_t>(n);
  }
  return {};
}

// PATH.tmp-PID, then a rename over PATH.
Result<void> ReplaceRegularFile(const std::string& path, std::string_view bytes) {
  const std::string temporary = fmt::format("{}.tmp-{}", path, getpid());
  // O_EXCL | O_NOFOLLOW: the name is predictable, and a link planted there
  // must not be written through.
  UniqueFd fd(
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid()) return tl::unexpected(WriteError(path, "create it"));
  auto written = WriteAll(fd.get(), path, bytes);
  if (written && close(fd.Release()) != 0) written = tl::unexpected(WriteError(path, "write it"));
  if (written && rename(temporary.c_str(), path.c_str()) != 0) {
    written = tl::unexpected(WriteError(path, "rename the finished file onto it"));
  }
  if (!written) unlink(temporary.c_str());
  return written;
}

}  // namespace

Result<void> WriteOutputFile(const std::string& path, std::string_view bytes) {
  struct stat link {};
  if (lstat(path.c_str(), &link) != 0 || S_ISREG(link.st_mode)) {
    return ReplaceRegularFile(path, bytes);
  }
  if (S_ISLNK(link.st_mode)) TRY(CheckReplaceable(path, "-o"));  // another user's, in /tmp
  struct stat target {};
  if (stat(path.c_str(), &target) != 0) {
    // A dangling link: replaced like a missing file.
    return ReplaceRegularFile(path, bytes);
  }
  if (S_ISDIR(target.st_mode) || S_ISSOCK(target.st_mode) || S_ISBLK(target.st_mode)) {
    return Fail(fmt::format("-o {}: it is {}; write to a regular file, a FIFO or a character "
                            "device",
                            path, FileKindName(target.st_mode)));
  }
  // A device, a FIFO, or a regular file behind a symlink (/dev/stdout
  // redirected to a file): written through, as a shell's > would.
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return tl::unexpected(WriteError(path, "open it"));
  TRY(WriteAll(fd.get(), path, bytes));
  if (close(fd.Release()) != 0) return tl::unexpected(WriteError(path, "write it"));
  return {};
}

}  // namespace sample::report
