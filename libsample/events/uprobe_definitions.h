// DefinedUprobes: uprobe events defined in tracefs (its uprobe_events
// file), as perf probe defines them, for the recorder's own use.
//
// The uprobe PMU (uprobe:PATH:SYMBOL in -e) needs no definition but
// fetches nothing: a sample has the registers at the probe only if it
// asks for them all, and its event cannot follow new threads (see
// record/events/event_attrs.cc, OpenedOnEveryCpu). A defined probe is a
// tracepoint: it fetches the values it names (`size=%di:u64`,
// `ptr=$retval:x64`) into the sample's raw payload, where the tracepoint's
// format names them, and it is inherited like any tracepoint. The cost is
// state outside the process: the definitions stay until removed, so
// they live in a group of the recorder's own (`PREFIX_PID`), are removed
// when this object goes, and a later recorder removes those of a recorder
// that died (RemoveStale).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/events/tracefs.h"
#include "libsample/result.h"

namespace sample {

struct UprobeDefinition {
  std::string event;  // its name in the group: letters, digits and '_'
  bool retprobe = false;
  std::string path;          // the binary, as the kernel resolves it
  uint64_t file_offset = 0;  // of the probed instruction
  std::string fetch_args;    // "size=%di:u64", "ptr=$retval:x64", ...
};

class DefinedUprobes {
 public:
  // Defines every probe of `defs` in `group`. On failure none stays
  // defined and the error names the probe and the kernel's reason (from
  // tracefs's error_log when it has one), with advice for EACCES/EPERM.
  static Result<DefinedUprobes> Define(const Tracefs& tracefs, std::string group,
                                       const std::vector<UprobeDefinition>& defs);

  // Removes the groups named `prefix` followed by the id of a process
  // that no longer exists: what a recorder killed before its clean-up
  // left behind. Quiet; a group still in use stays.
  static void RemoveStale(const Tracefs& tracefs, std::string_view prefix);

  DefinedUprobes(DefinedUprobes&& other) noexcept;
  DefinedUprobes& operator=(DefinedUprobes&&) = delete;
  DefinedUprobes(const DefinedUprobes&) = delete;
  DefinedUprobes& operator=(const DefinedUprobes&) = delete;
  // Removes the definitions (their events must be closed by then: the
  // kernel refuses to remove a probe in use).
  ~DefinedUprobes();

  // The uprobe_events file and the commands that remove the definitions,
  // which this object then leaves to its caller (to run where it knows the
  // probes' events are closed).
  std::string events_file() const { return root_ + "/uprobe_events"; }
  std::vector<std::string> ReleaseRemovals();
  // "GROUP:EVENT", as -e names the tracepoint.
  std::string TracepointName(std::string_view event) const {
    return group_ + ":" + std::string(event);
  }

 private:
  DefinedUprobes(std::string root, std::string group)
      : root_(std::move(root)), group_(std::move(group)) {}
  void RemoveAll();

  std::string root_;
  std::string group_;
  std::vector<std::string> events_;
};

}  // namespace sample
