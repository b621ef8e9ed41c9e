#include "report/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "libsample/unique_fd.h"

namespace sample::report {
namespace {

Error WriteError(const std::string& path, const char* what) {
  const int err = errno;
  return Error{fmt::format("-o {}: cannot {}: {}", path, what, std::strerror(err)), err};
}

}  // namespace

Result<void> WriteOutputFile(const std::string& path, std::string_view bytes) {
  const std::string temporary = fmt::format("{}.tmp-{}", path, getpid());
  UniqueFd fd(open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return tl::unexpected(WriteError(path, "create it"));
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Error error = WriteError(path, "write it");
      unlink(temporary.c_str());
      return tl::unexpected(error);
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd.Release()) != 0) {
    Error error = WriteError(path, "write it");
    unlink(temporary.c_str());
    return tl::unexpected(error);
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    Error error = WriteError(path, "rename the finished file onto it");
    unlink(temporary.c_str());
    return tl::unexpected(error);
  }
  return {};
}

}  // namespace sample::report
