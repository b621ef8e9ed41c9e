#include "libsample/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "libsample/file_owner.h"

namespace sample {

size_t PreadAll(int fd, std::span<std::byte> out, uint64_t offset) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

const char* FileKindName(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Result<UniqueFd> OpenRegularFile(const std::string& path, OpenRegularOptions options) {
  // stat first, so that what is not a regular file is never opened: opening
  // a device can have side effects even when nothing is read.
  struct stat before {};
  const int looked = options.no_follow ? lstat(path.c_str(), &before) : stat(path.c_str(), &before);
  if (looked != 0) {
    const int err = errno;
    return Fail(fmt::format("{}: {}", path, std::strerror(err)), err);
  }
  if (!S_ISREG(before.st_mode)) {
    return Fail(fmt::format("{}: it is {}, not a regular file", path, FileKindName(before.st_mode)),
                EINVAL);
  }
  // O_NONBLOCK: should a FIFO be swapped in after the stat, open returns
  // at once instead of waiting for a writer (the fstat below refuses it).
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  if (options.no_follow) flags |= O_NOFOLLOW;
  UniqueFd fd(open(path.c_str(), flags));
  if (!fd.valid()) {
    const int err = errno;
    return Fail(fmt::format("{}: {}", path, std::strerror(err)), err);
  }
  struct stat opened {};
  if (fstat(fd.get(), &opened) != 0) {
    const int err = errno;
    return Fail(fmt::format("{}: fstat: {}", path, std::strerror(err)), err);
  }
  if (!S_ISREG(opened.st_mode) || opened.st_dev != before.st_dev ||
      opened.st_ino != before.st_ino) {
    return Fail(fmt::format("{}: it changed while being opened", path), EINVAL);
  }
  // Regular files never block; reads should not see EAGAIN either way, but
  // the flag would be inherited by anything the fd is handed to.
  const int status = fcntl(fd.get(), F_GETFL);
  if (status >= 0) fcntl(fd.get(), F_SETFL, status & ~O_NONBLOCK);
  return fd;
}

Result<ParentDirectory> OpenParentDirectory(const std::string& path) {
  const std::filesystem::path named(path);
  ParentDirectory parent;
  parent.name = named.filename().string();
  if (parent.name.empty() || parent.name == "." || parent.name == "..") {
    return Fail(fmt::format("{}: names no entry of a directory", path), EINVAL);
  }
  parent.path = named.parent_path().string();
  if (parent.path.empty()) parent.path = ".";
  parent.fd = UniqueFd(open(parent.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!parent.fd.valid() || fstat(parent.fd.get(), &parent.st) != 0) {
    const int err = errno;
    return Fail(fmt::format("{}: {}", parent.path, std::strerror(err)), err);
  }
  return parent;
}

Result<void> CheckNotPlanted(const ParentDirectory& parent, uid_t owner) {
  if (owner == geteuid() || owner == 0 || WritableOnlyByOwner(parent.st)) return {};
  return Fail(fmt::format(
      "owned by uid {}, neither this user (uid {}) nor root, in {}, a "
      "directory {} may create entries in (mode {:04o})",
      owner, geteuid(), parent.path, WhoElseMayWrite(parent.st), parent.st.st_mode & 07777));
}

Result<void> CheckReplaceable(const std::string& path, const std::string& option) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return {};  // nothing there (or unreachable: open will say)
  if (S_ISREG(st.st_mode)) return {};
  if (!S_ISLNK(st.st_mode)) {
    return Fail(
        fmt::format("{} {}: it is {}; only a regular file is written or moved out of "
                    "the way (FILE.old)",
                    option, path, FileKindName(st.st_mode)));
  }
  // A symlink: renaming it moves only the link, but where others may
  // create entries (/tmp), a link of someone else's is a trap laid for
  // whoever writes there next; refuse it rather than rely on the kernel's
  // protected_symlinks. Judged in the parent as opened, the link found
  // there again.
  auto parent = OpenParentDirectory(path);
  if (!parent) return {};  // unreachable: the open that follows will say
  if (fstatat(parent->fd.get(), parent->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISLNK(st.st_mode)) {
    return Fail(fmt::format("{} {}: it changed while being checked", option, path));
  }
  if (auto trusted = CheckNotPlanted(*parent, st.st_uid); !trusted) {
    return Fail(
        fmt::format("{} {}: refused: a symbolic link {} (another user's link there could "
                    "redirect the write); remove it or choose another path",
                    option, path, trusted.error().message));
  }
  return {};
}

Result<void> MoveAside(const std::string& path, const std::string& option) {
  // Only a regular file (or a link that is not a trap) is moved: as root,
  // `-o /dev/null` renamed the real /dev/null away.
  TRY(CheckReplaceable(path, option));
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return {};
  const std::string old = path + ".old";
  if (rename(path.c_str(), old.c_str()) != 0) {
    return Fail(fmt::format("cannot rename {} to {}: {}", path, old, strerror(errno)));
  }
  return {};
}

}  // namespace sample
