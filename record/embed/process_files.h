// ProcessFiles: opens the files a recorded process sees, through its own
// mount namespace, so that the binaries and perf maps of a container
// profiled from the host are read as the process saw them (the host may
// have no file at that path, or another one), also after it exited.
//
// The first time a process is noted (at its exec, which an exec waker
// reports at once, EventOpener::exec_wakers; else its first mapping
// drained), its mount namespace is compared with ours; noted again at a
// later exec while it lives, and kept once it is gone. A different one is
// pinned: an fd on /proc/PID/ns/mnt keeps the namespace, and with it its
// mounts, alive after its last process exits (without it, a bind mount
// made inside is gone by the end of the recording), and an fd on
// /proc/PID/root is where its paths are resolved, with openat2's
// RESOLVE_IN_ROOT so that absolute symlinks stay inside. Namespaces are
// pinned once each: the cost is one stat() per new process. Processes in
// our namespace, and those gone before they were noted, have their paths
// opened as they are. Only regular files are opened, never blocking. Owns
// the pinned fds. One thread (the recorder's main one).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "libsample/regular_file.h"
#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample::record {

class ProcessFiles {
 public:
  // `proc`: where procfs is (tests point it elsewhere).
  explicit ProcessFiles(std::string proc = "/proc");

  // Notes process `pid` (cheap after the first time).
  void Note(uint32_t pid);
  // Notes it again: it ran exec, and may have entered another namespace
  // before (unshare -m does). A process gone by now keeps what was noted
  // (the exec waker noted it while it lived).
  void Renote(uint32_t pid);
  // `path` as process `pid` sees it (a process never noted: as this one
  // does). An error names the path and why.
  Result<UniqueFd> Open(uint32_t pid, const std::string& path,
                        OpenRegularOptions options = {}) const;
  // Whether `pid` is in a mount namespace other than ours (noted processes).
  bool InOtherNamespace(uint32_t pid) const;
  // The pid `pid` has in its own pid namespace (a JIT names its perf map
  // after it), read from /proc/PID/status while the process lives; `pid`
  // itself when it shares ours or cannot be read.
  uint32_t NamespacePid(uint32_t pid) const;
  // The real uid of `pid` while it lives (ProcessUid), nullopt once gone:
  // whose code it runs, and so whose files (perf maps, jitdumps) may name
  // it.
  std::optional<uid_t> Uid(uint32_t pid) const;
  // Mount namespaces pinned (other than ours).
  size_t pinned() const { return namespaces_.size(); }

 private:
  struct Pinned {
    UniqueFd ns;    // /proc/PID/ns/mnt: keeps the namespace alive
    UniqueFd root;  // /proc/PID/root: where its paths resolve
  };
  static constexpr int kOurs = -1;
  static constexpr int kGone = -2;
  // `pid`'s namespace: an index into namespaces_ (pinned now if new),
  // kOurs, or kGone when the process is gone.
  int NamespaceOf(uint32_t pid);

  std::string proc_;
  uint64_t own_ns_ = 0;
  std::unordered_map<uint32_t, int> ns_of_pid_;  // index into namespaces_, or kOurs
  std::unordered_map<uint64_t, int> ns_by_inode_;
  std::vector<Pinned> namespaces_;
};

}  // namespace sample::record
