#include "record/embed/process_files.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "libsample/regular_file.h"
#include "libsample/symbols/perf_map.h"

namespace sample::record {
namespace {

uint64_t InodeOf(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// `path` under the directory `root` as if it were "/", for a file we did
// not write: a regular file only (checked on the open fd), not blocking on
// a FIFO planted there.
Result<UniqueFd> OpenInRoot(int root, const std::string& path, bool no_follow) {
  const size_t first = path.find_first_not_of('/');
  if (first == std::string::npos) return Fail(fmt::format("{}: not a file's path", path));
  const std::string relative = path.substr(first);
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (no_follow ? O_NOFOLLOW : 0);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const long fd = syscall(SYS_openat2, root, relative.c_str(), &how, sizeof(how));
  if (fd < 0) {
    return Fail(fmt::format("{} (in the process's mount namespace): {}", path, strerror(errno)),
                errno);
  }
  UniqueFd owned(static_cast<int>(fd));
  struct stat st;
  if (fstat(owned.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Fail(fmt::format("{} (in the process's mount namespace): not a regular file", path));
  }
  // Reads may block from here on (as for any regular file).
  fcntl(owned.get(), F_SETFL, O_RDONLY);
  return owned;
}

}  // namespace

ProcessFiles::ProcessFiles(std::string proc)
    : proc_(std::move(proc)), own_ns_(InodeOf(proc_ + "/self/ns/mnt")) {}

int ProcessFiles::NamespaceOf(uint32_t pid) {
  const std::string dir = fmt::format("{}/{}", proc_, pid);
  const uint64_t ns = InodeOf(dir + "/ns/mnt");
  if (ns == 0) return kGone;
  if (ns == own_ns_) return kOurs;
  if (auto known = ns_by_inode_.find(ns); known != ns_by_inode_.end()) return known->second;
  Pinned pinned{UniqueFd(open((dir + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC)),
                UniqueFd(open((dir + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC))};
  if (pinned.ns.get() < 0 || pinned.root.get() < 0) return kGone;  // gone in between
  const int index = static_cast<int>(namespaces_.size());
  namespaces_.push_back(std::move(pinned));
  ns_by_inode_.emplace(ns, index);
  return index;
}

void ProcessFiles::Note(uint32_t pid) {
  if (ns_of_pid_.contains(pid)) return;
  // Gone before it was noted: its paths are opened as ours are.
  const int ns = NamespaceOf(pid);
  ns_of_pid_.emplace(pid, ns == kGone ? kOurs : ns);
}

void ProcessFiles::Renote(uint32_t pid) {
  const int ns = NamespaceOf(pid);
  // Gone by now (its exec's record drained after it exited): what was
  // noted of it while it lived stands.
  if (ns == kGone && ns_of_pid_.contains(pid)) return;
  ns_of_pid_.insert_or_assign(pid, ns == kGone ? kOurs : ns);
}

bool ProcessFiles::InOtherNamespace(uint32_t pid) const {
  auto it = ns_of_pid_.find(pid);
  return it != ns_of_pid_.end() && it->second != kOurs;
}

Result<UniqueFd> ProcessFiles::Open(uint32_t pid, const std::string& path,
                                    OpenRegularOptions options) const {
  auto it = ns_of_pid_.find(pid);
  if (it == ns_of_pid_.end() || it->second == kOurs || path.empty() || path.front() != '/') {
    return OpenRegularFile(path, options);
  }
  return OpenInRoot(namespaces_[it->second].root.get(), path, options.no_follow);
}

std::optional<uid_t> ProcessFiles::Uid(uint32_t pid) const { return ProcessUid(pid, proc_); }

uint32_t ProcessFiles::NamespacePid(uint32_t pid) const {
  std::ifstream status(fmt::format("{}/{}/status", proc_, pid));
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("NSpid:")) continue;
    std::istringstream fields(line.substr(6));
    uint32_t last = pid;
    for (uint32_t value; fields >> value;) last = value;
    return last;
  }
  return pid;
}

}  // namespace sample::record
