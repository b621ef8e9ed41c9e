#include "record/target/record_target.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "libsample/comma_list.h"
#include "libsample/cpu_list.h"
#include "libsample/unique_fd.h"

namespace sample::record {
namespace {

std::optional<pid_t> ParsePid(std::string_view s) {
  pid_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value <= 0) return std::nullopt;
  return value;
}

// The Tgid line of /proc/TID/status: the process a thread belongs to.
std::optional<pid_t> ProcessOfThread(pid_t tid) {
  std::ifstream in(fmt::format("/proc/{}/status", tid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Tgid:", 0) == 0) return ParsePid(line.substr(line.find_first_not_of(" \t", 5)));
  }
  return std::nullopt;
}

// A task is gone once it is a zombie: kill(pid, 0) still succeeds then, but
// it will never run again. State is the field after the ")" of the comm.
bool TaskGone(pid_t pid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return true;
  char buffer[512];
  const ssize_t n = read(fd.get(), buffer, sizeof(buffer) - 1);
  if (n <= 0) return true;
  const std::string_view stat(buffer, static_cast<size_t>(n));
  const size_t paren = stat.rfind(')');
  if (paren == std::string_view::npos || paren + 2 >= stat.size()) return false;
  const char state = stat[paren + 2];
  return state == 'Z' || state == 'X';
}

}  // namespace

bool TargetsGone(const RecordTarget& target) {
  if (target.kind != TargetKind::kProcesses && target.kind != TargetKind::kThreads) return false;
  for (pid_t pid : target.kind == TargetKind::kProcesses ? target.processes : target.threads) {
    if (!TaskGone(pid)) return false;
  }
  return true;
}

Result<std::vector<pid_t>> ParseIdList(const std::string& text, const char* what) {
  std::vector<pid_t> ids;
  for (const std::string_view part : SplitCommaList(text)) {
    auto id = ParsePid(part);
    if (!id) return Fail(fmt::format("bad {} '{}' in '{}'", what, part, text));
    ids.push_back(*id);
  }
  return ids;
}

Result<std::vector<pid_t>> ThreadsOf(pid_t pid) {
  const std::string path = fmt::format("/proc/{}/task", pid);
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return Fail(fmt::format("no process {} (cannot read {})", pid, path));
  std::vector<pid_t> threads;
  while (dirent* entry = readdir(dir)) {
    if (auto tid = ParsePid(entry->d_name)) threads.push_back(*tid);
  }
  closedir(dir);
  std::sort(threads.begin(), threads.end());
  if (threads.empty()) return Fail(fmt::format("process {} has no threads left", pid));
  return threads;
}

Result<RecordTarget> ResolveTarget(const TargetOptions& options) {
  RecordTarget target;
  const int kinds = !options.command.empty() + !options.pids.empty() + !options.tids.empty();
  if (kinds > 1) return Fail("give one target: a command, -p PID or -t TID");
  if (options.all_cpus && (!options.pids.empty() || !options.tids.empty())) {
    return Fail("-a records every process; it does not combine with -p or -t");
  }
  if (kinds == 0 && !options.all_cpus && options.cpu_list.empty()) {
    return Fail("nothing to record: give a command, -p PID, -t TID, -a or -C CPUS");
  }

  TRY_ASSIGN(auto online, OnlineCpus());
  target.cpus = online;
  if (!options.cpu_list.empty()) {
    TRY_ASSIGN(auto selected, ParseCpuList(options.cpu_list));
    for (int cpu : selected) {
      if (!std::binary_search(online.begin(), online.end(), cpu)) {
        return Fail(fmt::format("CPU {} in -C {} is not online (online: {})", cpu, options.cpu_list,
                                fmt::join(online, ",")));
      }
    }
    target.cpus = selected;
  }

  target.launches_command = !options.command.empty();
  // As perf: with -a a command only sets how long the CPUs are recorded.
  if (!options.command.empty() && !options.all_cpus) {
    target.kind = TargetKind::kCommand;
    target.inherit = options.inherit.value_or(true);
  } else if (!options.pids.empty()) {
    target.kind = TargetKind::kProcesses;
    TRY_ASSIGN(auto pids, ParseIdList(options.pids, "process id"));
    target.processes = pids;
    for (pid_t pid : pids) {
      TRY_ASSIGN(auto threads, ThreadsOf(pid));
      target.threads.insert(target.threads.end(), threads.begin(), threads.end());
    }
    target.inherit = options.inherit.value_or(true);
  } else if (!options.tids.empty()) {
    target.kind = TargetKind::kThreads;
    TRY_ASSIGN(auto tids, ParseIdList(options.tids, "thread id"));
    target.threads = tids;
    for (pid_t tid : tids) {
      auto pid = ProcessOfThread(tid);
      if (!pid) return Fail(fmt::format("no thread {} (cannot read /proc/{}/status)", tid, tid));
      if (std::find(target.processes.begin(), target.processes.end(), *pid) ==
          target.processes.end()) {
        target.processes.push_back(*pid);
      }
    }
    // perf: -t disables inheritance unless --inherit is given.
    target.inherit = options.inherit.value_or(false);
  } else {
    target.kind = TargetKind::kCpus;
    target.threads = {-1};
    target.inherit = false;  // meaningless for CPU-wide events
    target.synthesize_all = true;
  }
  return target;
}

}  // namespace sample::record
