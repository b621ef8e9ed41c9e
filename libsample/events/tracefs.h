// Tracefs: where the kernel's tracing filesystem is mounted, and the
// tracepoint ids it publishes (events/SUBSYSTEM/NAME/id, the config of a
// PERF_TYPE_TRACEPOINT event).
//
// Modern kernels mount tracefs at /sys/kernel/tracing; older setups reach it
// through debugfs at /sys/kernel/debug/tracing. Containers and minimal
// systems often mount neither, so Locate mounts it when allowed, as perf
// does. Holds only the path of the mount.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

class Tracefs {
 public:
  // `root` non-empty: that directory is used as is (tests point it at a fake
  // tree); it must contain events/. Empty: a tracefs listed in /proc/mounts,
  // else /sys/kernel/tracing or /sys/kernel/debug/tracing if they hold
  // events/, else tracefs is mounted at /sys/kernel/tracing (mount(2), needs
  // CAP_SYS_ADMIN). The errors tell apart a tracefs this user may not read
  // (tracefs is mode 0700 by default; EACCES, see PermissionError) from one
  // that is not mounted (which says how to mount it by hand).
  static Result<Tracefs> Locate(const std::string& root);

  // The error for a tracefs mounted at `root` that this user cannot look
  // into: who may, and how to run or open it up. Public so that tests can
  // check it without being another user.
  static Error PermissionError(const std::string& root);

  const std::string& root() const { return root_; }

  // The id of tracepoint SUBSYSTEM:EVENT. The error distinguishes an
  // unknown subsystem, an unknown event and a permission problem (tracefs is
  // root-only by default), and says what to do.
  Result<uint64_t> TracepointId(std::string_view subsystem, std::string_view event) const;

  // The text of events/SUBSYSTEM/EVENT/format (the layout of the
  // tracepoint's raw payload, see trace_format.h); empty if unreadable.
  std::string TracepointFormat(std::string_view subsystem, std::string_view event) const;

  // "subsystem:event" for every tracepoint whose full name matches `glob`
  // (fnmatch(3): "sched:*", "*:sys_enter_open*"), sorted.
  std::vector<std::string> List(std::string_view glob) const;

 private:
  explicit Tracefs(std::string root) : root_(std::move(root)) {}

  std::string root_;
};

}  // namespace sample
