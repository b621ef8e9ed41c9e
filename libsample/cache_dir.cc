#include "libsample/cache_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>


#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "libsample/file_owner.h"
#include "libsample/regular_file.h"
#include "libsample/string_parts.h"

namespace sample {
namespace {

// Links followed in one walk, as the kernel bounds a lookup (it allows 40).
constexpr int kMaxSymlinks = 16;
// A temporary this old is a killed run's.
constexpr int64_t kStaleTemporarySeconds = 3600;

// The components of `path` put before those in `rest`, in their order.
void PrependComponents(std::string_view path, std::deque<std::string>& rest) {
  std::vector<std::string> parts;
  for (size_t at = 0; at <= path.size();) {
    size_t slash = path.find('/', at);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > at) parts.emplace_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  rest.insert(rest.begin(), parts.begin(), parts.end());
}

// A directory of the walk: its fd (O_PATH: a directory we may search but
// not list, such as a 0711 home, is walked through) and its name.
struct Level {
  UniqueFd fd;
  std::string name;
};

std::string PathOf(const std::vector<Level>& levels) {
  if (levels.size() <= 1) return "/";
  std::string path;
  for (size_t i = 1; i < levels.size(); ++i) path += "/" + levels[i].name;
  return path;
}

bool OwnedByUsOrRoot(const struct stat& st) { return st.st_uid == 0 || st.st_uid == geteuid(); }

// What may hold the cache's path: a directory of root or of this user that
// no one else may write (its owner's private group may: umask 002's 0775),
// or a sticky one (/tmp), where no one else can rename or remove what is
// ours.
Result<void> CheckPassable(const struct stat& st, const std::string& where) {
  if (!OwnedByUsOrRoot(st)) {
    return Fail(fmt::format("{}: owned by uid {}, neither this user (uid {}) nor root", where,
                            st.st_uid, geteuid()));
  }
  if (!WritableOnlyByOwner(st) && (st.st_mode & S_ISVTX) == 0) {
    return Fail(fmt::format("{}: writable by {} (mode {:o}) and not sticky", where,
                            WhoElseMayWrite(st), st.st_mode & 07777));
  }
  return {};
}

// `name` in `parent`, not followed if a symlink; made (0700) if missing
// and `create`. The parent passed, so no one else can have put it there.
Result<UniqueFd> OpenComponent(int parent, const std::string& name, bool create,
                               const std::string& where) {
  for (int attempt = 0;; ++attempt) {
    UniqueFd fd(openat(parent, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (fd.valid()) return fd;
    if (errno != ENOENT || !create || attempt > 0) {
      return Fail(fmt::format("{}: {}", where, strerror(errno)), errno);
    }
    if (mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) {
      return Fail(fmt::format("{}: cannot make it: {}", where, strerror(errno)), errno);
    }
  }
}

// The target of the symlink open as `fd` (O_PATH): read from the link we
// checked, not looked up again by name.
Result<std::string> LinkTarget(int fd, const std::string& where) {
  char buffer[4096];
  const ssize_t n = readlinkat(fd, "", buffer, sizeof(buffer));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buffer)) {
    return Fail(fmt::format("{}: cannot read the symlink", where), errno);
  }
  return std::string(buffer, static_cast<size_t>(n));
}

}  // namespace

std::string UserCacheDir(std::string_view sub) {
  std::string dir;
  if (const char* xdg = getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    dir = std::string(xdg) + "/sample";
  } else if (const char* home = getenv("HOME"); home != nullptr && home[0] == '/') {
    dir = std::string(home) + "/.cache/sample";
  } else {
    return "";
  }
  if (!sub.empty()) dir += "/" + std::string(sub);
  return dir;
}

namespace {

// This process's refusals (CacheRefusal), by the path asked for: a few,
// the first of each cache.
std::mutex refusal_mutex;
std::vector<std::pair<std::string, std::string>> refusals;
constexpr size_t kMaxRefusals = 16;

// The walk of OpenCacheDirectory.
Result<CacheDirectory> WalkToCacheDirectory(const std::string& path,
                                            CacheDirectoryOptions options) {
  if (path.empty() || path[0] != '/') {
    return Fail(fmt::format("{}: not an absolute path", path), EINVAL);
  }
  std::vector<Level> levels;
  levels.push_back(Level{UniqueFd(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)), ""});
  struct stat st {};
  if (!levels[0].fd.valid() || fstat(levels[0].fd.get(), &st) != 0) {
    return Fail("/: cannot open", errno);
  }
  TRY(CheckPassable(st, "/"));
  std::deque<std::string> rest;
  PrependComponents(path, rest);
  int links = 0;
  while (!rest.empty()) {
    const std::string name = std::move(rest.front());
    rest.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      // The directory the walk came from: what the kernel's ".." is, as
      // the walk went through physical directories.
      if (levels.size() > 1) levels.pop_back();
      continue;
    }
    const std::string where = (levels.size() > 1 ? PathOf(levels) : "") + "/" + name;
    TRY_ASSIGN(UniqueFd fd, OpenComponent(levels.back().fd.get(), name, options.create, where));
    if (fstat(fd.get(), &st) != 0) return Fail(fmt::format("{}: cannot stat", where), errno);
    if (S_ISLNK(st.st_mode)) {
      // A link in a directory that passed is the owner's or root's choice;
      // anyone else's (planted in a sticky directory) is not followed.
      if (!OwnedByUsOrRoot(st)) {
        return Fail(fmt::format("{}: a symlink of uid {}, neither this user (uid {}) nor root",
                                where, st.st_uid, geteuid()));
      }
      if (++links > kMaxSymlinks) return Fail(fmt::format("{}: too many symlinks", path), ELOOP);
      TRY_ASSIGN(const std::string target, LinkTarget(fd.get(), where));
      if (target.starts_with('/')) levels.erase(levels.begin() + 1, levels.end());
      PrependComponents(target, rest);
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      return Fail(fmt::format("{}: {}, not a directory", where, FileKindName(st.st_mode)));
    }
    TRY(CheckPassable(st, where));
    levels.push_back(Level{std::move(fd), name});
  }
  const std::string reached = PathOf(levels);
  // The cache itself: ours alone (sticky is no excuse: its files are read).
  if (fstat(levels.back().fd.get(), &st) != 0 || st.st_uid != geteuid() ||
      !WritableOnlyByOwner(st)) {
    return Fail(fmt::format("{}: not a directory of this user (uid {}) that only it may write",
                            reached, geteuid()));
  }
  // "." of the directory reached: the same inode, opened for listing.
  UniqueFd fd(openat(levels.back().fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Fail(fmt::format("{}: cannot open: {}", reached, strerror(errno)), errno);
  return CacheDirectory{std::move(fd), reached};
}

}  // namespace

Result<CacheDirectory> OpenCacheDirectory(const std::string& path, CacheDirectoryOptions options) {
  auto dir = WalkToCacheDirectory(path, options);
  // A refusal by the rules (errno 0: an owner, a mode, a link), not a
  // directory missing or unreachable, is kept for CacheRefusal.
  if (!dir && dir.error().sys_errno == 0) {
    std::lock_guard lock(refusal_mutex);
    if (refusals.size() < kMaxRefusals) refusals.emplace_back(path, dir.error().message);
  }
  return dir;
}

std::string CacheRefusal(std::string_view under) {
  std::lock_guard lock(refusal_mutex);
  for (const auto& [path, message] : refusals) {
    if (!under.empty() && path.starts_with(under)) return message;
  }
  return "";
}

UniqueFd OpenOwnDirectory(const std::string& path, CacheDirectoryOptions options) {
  auto dir = OpenCacheDirectory(path, options);
  return dir ? std::move(dir->fd) : UniqueFd();
}

Result<UniqueFd> OpenCacheFile(int dir_fd, std::string_view name) {
  const std::string file(name);
  if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos) {
    return Fail(fmt::format("{}: not a file name", file));
  }
  UniqueFd fd(
      openat(dir_fd, file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return Fail(fmt::format("{}: {}", file, strerror(errno)), errno);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Fail(fmt::format("{}: not a regular file", file));
  }
  if (st.st_uid != geteuid() || !WritableOnlyByOwner(st)) {
    return Fail(fmt::format("{}: owned by uid {} with mode {:o}; not a file of this user's cache",
                            file, st.st_uid, st.st_mode & 07777));
  }
  return fd;
}

void MarkCacheFileUsed(int fd) {
  const timespec times[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  futimens(fd, times);
}

Result<CacheFileWriter> CacheFileWriter::Create(int dir_fd, std::string name) {
  CacheFileWriter writer;
  writer.dir_ = UniqueFd(fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  if (!writer.dir_.valid()) return Fail("cannot duplicate the cache directory's fd", errno);
  writer.name_ = std::move(name);
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint64_t random = 0;
    if (getrandom(&random, sizeof(random), GRND_NONBLOCK) != sizeof(random)) {
      // No entropy yet (early boot): O_EXCL still makes the name ours.
      timespec now{};
      clock_gettime(CLOCK_MONOTONIC, &now);
      random = (uint64_t{static_cast<uint32_t>(getpid())} << 32) ^ now.tv_nsec ^ attempt;
    }
    writer.temporary_ = fmt::format(".{:016x}.tmp", random);
    writer.fd_ = UniqueFd(openat(writer.dir_.get(), writer.temporary_.c_str(),
                                 O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (writer.fd_.valid()) return writer;
    if (errno != EEXIST) break;
  }
  writer.temporary_.clear();
  return Fail(fmt::format("{}: cannot make a temporary file: {}", writer.name_, strerror(errno)),
              errno);
}

CacheFileWriter::~CacheFileWriter() {
  if (!committed_ && dir_.valid() && !temporary_.empty()) {
    unlinkat(dir_.get(), temporary_.c_str(), 0);
  }
}

Result<void> CacheFileWriter::Write(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd_.get(), bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail(fmt::format("{}: cannot write: {}", name_, strerror(errno)), errno);
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return {};
}

Result<void> CacheFileWriter::Commit() {
  if (close(fd_.Release()) != 0) {
    return Fail(fmt::format("{}: cannot write: {}", name_, strerror(errno)), errno);
  }
  if (renameat(dir_.get(), temporary_.c_str(), dir_.get(), name_.c_str()) != 0) {
    return Fail(fmt::format("{}: cannot rename into place: {}", name_, strerror(errno)), errno);
  }
  committed_ = true;
  return {};
}

Result<void> WriteCacheFile(int dir_fd, const std::string& name, std::span<const std::byte> bytes) {
  TRY_ASSIGN(CacheFileWriter writer, CacheFileWriter::Create(dir_fd, name));
  TRY(writer.Write(bytes));
  return writer.Commit();
}

void TrimCacheDirectory(int dir_fd, const CacheTrimPolicy& policy) {
  UniqueFd listing(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* dir = listing.valid() ? fdopendir(listing.get()) : nullptr;
  if (dir == nullptr) return;
  listing.Release();  // closedir closes it
  struct File {
    timespec used;
    uint64_t bytes;
    std::string name;
  };
  std::vector<File> files;
  const int64_t now = time(nullptr);
  const std::string old_temporary = fmt::format("{}.", policy.suffix);
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    struct stat st {};
    if (fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid()) {
      continue;
    }
    const bool temporary =
        name.ends_with(".tmp") || (!policy.suffix.empty() && !name.ends_with(policy.suffix) &&
                                   name.find(old_temporary) != std::string_view::npos);
    if (temporary) {
      if (now - st.st_mtim.tv_sec > kStaleTemporarySeconds) unlinkat(dirfd(dir), entry->d_name, 0);
      continue;
    }
    if (!name.ends_with(policy.suffix)) continue;
    const timespec used =
        std::max(st.st_atim, st.st_mtim, [](const timespec& a, const timespec& b) {
          return std::tie(a.tv_sec, a.tv_nsec) < std::tie(b.tv_sec, b.tv_nsec);
        });
    if (name != policy.keep && now - used.tv_sec > policy.max_unused_seconds) {
      unlinkat(dirfd(dir), entry->d_name, 0);
      continue;
    }
    files.push_back(File{used, static_cast<uint64_t>(st.st_size), std::string(name)});
  }
  std::ranges::sort(files, [](const File& a, const File& b) {
    return std::tie(a.used.tv_sec, a.used.tv_nsec, a.name) <
           std::tie(b.used.tv_sec, b.used.tv_nsec, b.name);
  });
  uint64_t bytes = 0;
  for (const File& file : files) bytes += file.bytes;
  size_t count = files.size();
  for (const File& file : files) {
    if (bytes <= policy.max_bytes && count <= policy.max_files) break;
    if (file.name == policy.keep) continue;
    if (unlinkat(dirfd(dir), file.name.c_str(), 0) == 0) {
      bytes -= file.bytes;
      --count;
    }
  }
  closedir(dir);
}


}  // namespace sample
