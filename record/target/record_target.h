// RecordTarget: what to profile (a new command, existing processes or
// threads, or whole CPUs) and the (pid, cpu) pairs perf_event_open needs
// for it, following perf's conventions:
//   command      pid = the command, every selected CPU, inherit
//   -p PID,...   every thread of each process (read from /proc), every CPU,
//                inherit (threads started later are followed too)
//   -t TID,...   those threads only, no inherit unless asked
//   -a / -C      pid = -1 on every (selected) CPU
//   -a COMMAND   the same, the command run beside and the recording ended
//                when it ends (`-a -- sleep 10`: the whole machine for ten
//                seconds); -C with a command is the command on those CPUs
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "libsample/result.h"

namespace sample::record {

enum class TargetKind { kCommand, kProcesses, kThreads, kCpus };

struct TargetOptions {
  std::vector<std::string> command;
  std::string pids;             // -p
  std::string tids;             // -t
  bool all_cpus = false;        // -a
  std::string cpu_list;         // -C
  std::optional<bool> inherit;  // --no-inherit / --inherit; default per kind
};

struct RecordTarget {
  TargetKind kind = TargetKind::kCommand;
  std::vector<int> cpus;         // CPUs to open events on
  std::vector<pid_t> processes;  // -p: the processes; -t: their owning processes
  std::vector<pid_t> threads;    // the pids to open events with (-1 for kCpus)
  bool inherit = true;
  // Processes whose /proc state must be synthesized at start (empty for a
  // command, every process for kCpus).
  bool synthesize_all = false;
  // A command is launched: the target (kCommand), or with -a what sets how
  // long the CPUs are recorded (kCpus).
  bool launches_command = false;
};

// Validates the combination of options and resolves ids and CPU lists.
// For a command, `threads` is filled later with the launched child's pid.
Result<RecordTarget> ResolveTarget(const TargetOptions& options);

// Thread ids of a running process, from /proc/PID/task.
Result<std::vector<pid_t>> ThreadsOf(pid_t pid);

// Whether every process (-p) or thread (-t) of the target has ended (a
// zombie counts as ended: it will never run again). Always false for a
// command (its end comes as SIGCHLD) and for CPUs.
bool TargetsGone(const RecordTarget& target);

// Parses "1,2,3" into ids; errors name the bad part.
Result<std::vector<pid_t>> ParseIdList(const std::string& text, const char* what);

}  // namespace sample::record
