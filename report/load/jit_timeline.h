// JitTimeline: the jitdumps a recording holds (kJitDump), as the loader
// applies them: each process's dumps become one JitCode (its functions laid
// out in a pseudo-DSO, "[jitted-PID]"), and their code loads and moves are
// applied to the process table's JIT layer (ProcessTable::ApplyJitCode) in
// time order among the kernel's records, so a sample resolves against the
// code that was at its address when it was taken: code moved away, or
// memory reused for other code after a GC, names what was there then.
// Dumps are on the samples' clock (CLOCK_MONOTONIC, which the recorder
// opens its events with and V8 and the JVM agents stamp their records
// with); a change at the same time as a sample comes before it (the code
// was written before it ran). A dump stamped with the CPU's counter is
// applied at time 0: an exec of its process recorded later clears it.
// Owns the JitCode of each process (shared with the Recording, which keeps
// the code bytes for the annotate view to come, issue 30: nothing reads
// them today) and the changes not yet applied.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/model/process_table.h"
#include "libsample/symbols/jit_code.h"
#include "libsample/symbols/jitdump.h"

namespace sample::report {

// What the recording's jitdumps held, for --stats.
struct JitDumpStats {
  uint64_t dumps = 0;  // parsed (those with a bad header are warnings)
  uint64_t functions = 0;
  uint64_t torn_dumps = 0;  // ending in a record cut short
  JitDumpCounts records;
  JitCodeCounts code;
};

// The pseudo-DSO of process `pid`'s jitdump code: "[jitted-PID]".
std::string JitDumpDsoPath(uint32_t pid);
bool IsJitDumpDsoPath(std::string_view path);

class JitTimeline {
 public:
  // Parses `dumps`, interning each process's pseudo-DSO in `processes`;
  // a dump that cannot be parsed becomes a warning.
  JitTimeline(std::span<const RecordedJitDump> dumps, ProcessTable& processes);

  // Whether changes up to `time` remain to be applied (cheap: called for
  // every record).
  bool Due(uint64_t time) const { return next_ < changes_.size() && changes_[next_].time <= time; }
  // Applies every change up to and including `time` to `processes`,
  // calling `before_change(pid)` before each.
  void ApplyUntil(uint64_t time, ProcessTable& processes,
                  const std::function<void(uint32_t)>& before_change);

  // Each process's code by its pseudo-DSO path.
  const std::map<std::string, std::shared_ptr<const JitCode>>& code() const { return code_; }
  const JitDumpStats& stats() const { return stats_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Change {
    uint64_t time;
    uint32_t pid;
    uint32_t dso;
    JitCodeChange change;
  };

  std::map<std::string, std::shared_ptr<const JitCode>> code_;
  std::vector<Change> changes_;  // by time, stable
  size_t next_ = 0;
  JitDumpStats stats_;
  std::vector<std::string> warnings_;
};

}  // namespace sample::report
