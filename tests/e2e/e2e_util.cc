#include "tests/e2e/e2e_util.h"

#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sample::e2e {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

// perf_event_open(2) of `attr` on the calling thread, any CPU: 0 when it
// opened (the descriptor goes to `fd`, or is closed when `fd` is null),
// else the errno.
int PerfEventOpen(perf_event_attr attr, int* fd = nullptr) {
  attr.size = sizeof(attr);
  const long opened = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (opened < 0) return errno;
  if (fd != nullptr) {
    *fd = static_cast<int>(opened);
  } else {
    close(static_cast<int>(opened));
  }
  return 0;
}

// The errno values by which perf_event_open(2) says the kernel or the
// machine has no such event, as opposed to refusing this attr or this user.
bool IsUnsupported(int err) { return err == ENOENT || err == EOPNOTSUPP || err == ENODEV; }

bool HasEventsDir(const std::string& tracefs) {
  struct stat st {};
  return stat((tracefs + "/events").c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A tracefs holding events/ that this user can look into, or "".
std::string FindTracefs() {
  std::ifstream mounts("/proc/mounts");
  std::string device, mount_point, type, rest;
  while (mounts >> device >> mount_point >> type && std::getline(mounts, rest)) {
    if (type == "tracefs" && HasEventsDir(mount_point)) return mount_point;
  }
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (HasEventsDir(dir)) return dir;
  }
  return "";
}

// The state letter of /proc/PID/stat ('R', 'S', 'Z', ...), or 0 when the
// process is gone.
char ProcessState(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? 0 : stat[paren + 2];
}

}  // namespace

std::string TracepointUnavailable(const std::string& subsystem, const std::string& name,
                                  bool raw_data) {
  std::string tracefs = FindTracefs();
  // The recorder mounts tracefs where none is mounted and it may; so does
  // the probe, or the first tracepoint test of a boot would skip.
  if (tracefs.empty() && geteuid() == 0 &&
      mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0) {
    tracefs = FindTracefs();
  }
  if (tracefs.empty()) {
    return "no tracefs with an events/ directory is mounted (or this user may not read it), "
           "and this user cannot mount one at /sys/kernel/tracing";
  }
  const std::string id_path = tracefs + "/events/" + subsystem + "/" + name + "/id";
  std::ifstream id_file(id_path);
  uint64_t id = 0;
  if (!(id_file >> id)) {
    return "no tracepoint " + subsystem + ":" + name + " here: " + id_path + ": " +
           std::strerror(errno);
  }
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = id;
  attr.sample_period = 1;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | (raw_data ? PERF_SAMPLE_RAW : 0);
  attr.disabled = 1;
  if (const int err = PerfEventOpen(attr); err != 0) {
    return "perf_event_open of tracepoint " + subsystem + ":" + name + " (id " +
           std::to_string(id) + ") fails for this user: " + std::strerror(err);
  }
  return "";
}

std::string BreakpointUnavailable() {
  static volatile uint64_t watched = 0;
  perf_event_attr attr{};
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.bp_type = HW_BREAKPOINT_W;
  attr.bp_addr = reinterpret_cast<uintptr_t>(&watched);
  attr.bp_len = HW_BREAKPOINT_LEN_8;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  int fd = -1;
  if (const int err = PerfEventOpen(attr, &fd); err != 0) {
    if (IsUnsupported(err)) {
      return std::string("no hardware breakpoints here: perf_event_open of a write breakpoint: ") +
             std::strerror(err);
    }
    return "";
  }
  constexpr int kStores = 100;
  for (int i = 0; i < kStores; ++i) watched = watched + 1;
  uint64_t count = 0;
  const bool read_ok = read(fd, &count, sizeof(count)) == sizeof(count);
  close(fd);
  if (read_ok && count == 0) {
    return "hardware breakpoints do not fire on this machine: a breakpoint on a variable counted " +
           std::to_string(count) + " of " + std::to_string(kStores) + " stores to it";
  }
  return "";
}

std::string CgroupSwitchesUnavailable() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CGROUP_SWITCHES;
  attr.disabled = 1;
  if (const int err = PerfEventOpen(attr); IsUnsupported(err)) {
    return std::string("the kernel has no cgroup-switches event (Linux 5.13+): perf_event_open: ") +
           std::strerror(err);
  }
  return "";
}

const std::string& PerfUnusable() {
  static const std::string reason = [] {
    if (access(kPerf, X_OK) != 0) {
      return std::string("perf is not installed (apt-get install linux-perf)");
    }
    ScratchDir dir;
    const RunResult r = RunTool({kPerf, "record", "-q", "--no-buildid-cache", "-e", "cpu-clock",
                                 "-o", dir / "probe.data", "--", "/bin/true"},
                                dir);
    if (r.exit_code != 0) return "perf record does not work here: " + r.err;
    return std::string();
  }();
  return reason;
}

bool HardwareCyclesOpen() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return PerfEventOpen(attr) == 0;
}

double CommandCpuSeconds(pid_t pgid, pid_t leader) {
  static const double kTicksPerSecond = static_cast<double>(sysconf(_SC_CLK_TCK));
  double seconds = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stol(name) == leader) continue;
    // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
    // majflt cmajflt utime stime ...": the command name may hold spaces.
    const std::string stat = ReadFile(entry.path().string() + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 1));
    std::string state;
    long ppid = 0, pgrp = 0, skip = 0;
    unsigned long long utime = 0, stime = 0;
    fields >> state >> ppid >> pgrp;
    for (int i = 0; i < 8; ++i) fields >> skip;
    if (!(fields >> utime >> stime) || pgrp != pgid) continue;
    seconds += static_cast<double>(utime + stime) / kTicksPerSecond;
  }
  return seconds;
}

bool WaitForCommandCpu(pid_t pgid, pid_t leader, double seconds) {
  for (;;) {
    if (CommandCpuSeconds(pgid, leader) >= seconds) return true;
    const char state = ProcessState(leader);
    if (state == 0 || state == 'Z') return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp ? tmp : "/tmp") + "/sample-e2e-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ShellQuote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

pid_t Start(const std::vector<std::string>& argv, const ScratchDir& dir, const std::string& tag) {
  const std::string out = dir / (tag + ".out");
  const std::string err = dir / (tag + ".err");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    chdir(dir.path().c_str());
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

RunResult Wait(pid_t pid, const ScratchDir& dir, const std::string& tag) {
  int status = 0;
  waitpid(pid, &status, 0);
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(dir / (tag + ".out"));
  r.err = ReadFile(dir / (tag + ".err"));
  return r;
}

RunResult RunTool(const std::vector<std::string>& argv, const ScratchDir& dir) {
  return Wait(Start(argv, dir, "run"), dir, "run");
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

namespace {

// The first column's percentage of a profile row ("   12.34%  ..."), or
// nullopt for any other line (a call graph's lines under a row: "  |--",
// or a frame's name alone).
std::optional<double> RowShare(const std::string& line) {
  const size_t percent = line.find('%');
  if (percent == std::string::npos) return std::nullopt;
  const std::string number = line.substr(0, percent);
  const size_t start = number.find_first_not_of(' ');
  if (start == std::string::npos ||
      number.find_first_not_of("0123456789.", start) != std::string::npos) {
    return std::nullopt;
  }
  return std::stod(number.substr(start));
}

}  // namespace

std::optional<double> OverheadOf(const std::string& report, const std::string& symbol) {
  for (const std::string& line : Lines(report)) {
    if (line.empty() || line[0] == '#' || !RowShare(line)) continue;
    if (line.size() < symbol.size() ||
        line.compare(line.size() - symbol.size(), symbol.size(), symbol) != 0) {
      continue;
    }
    // The symbol must be a whole column, not the tail of a longer name.
    const size_t before = line.size() - symbol.size();
    if (before != 0 && line[before - 1] != ' ') continue;
    return RowShare(line);
  }
  return std::nullopt;
}

std::optional<double> OverheadOfRow(const std::string& report,
                                    const std::vector<std::string>& parts) {
  for (const std::string& line : Lines(report)) {
    if (line.empty() || line[0] == '#' || !RowShare(line)) continue;
    bool all = true;
    for (const std::string& part : parts) all = all && line.find(part) != std::string::npos;
    if (all) return RowShare(line);
  }
  return std::nullopt;
}

long SampleCount(const std::string& report) {
  std::smatch m;
  static const std::regex kSamples("# Samples: ([0-9]+)");
  if (std::regex_search(report, m, kSamples)) return std::stol(m[1]);
  return -1;
}

std::vector<std::string> AsNobody(std::vector<std::string> argv, const std::string& capability) {
  std::vector<std::string> prefix = {kSetpriv, "--reuid=65534", "--regid=65534", "--clear-groups"};
  if (!capability.empty()) {
    // Ambient capabilities survive the exec (they must be inheritable too).
    prefix.push_back("--inh-caps=+" + capability);
    prefix.push_back("--ambient-caps=+" + capability);
  }
  prefix.push_back("--");
  argv.insert(argv.begin(), prefix.begin(), prefix.end());
  return argv;
}

NobodyDir::NobodyDir() {
  std::string pattern = "/tmp/sample-nobody-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return;
  path_ = pattern;
  if (chmod(path_.c_str(), 0755) != 0 || chown(path_.c_str(), 65534, 65534) != 0) {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
    path_.clear();
  }
}

NobodyDir::~NobodyDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

bool NobodyDir::Copy(const std::string& from, const std::string& name) {
  const std::string to = path_ + "/" + name;
  std::error_code error;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, error);
  return !error && chmod(to.c_str(), 0755) == 0;
}

std::string KernelSamplesUnavailable() {
  int paranoid = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  if (geteuid() == 0 || paranoid <= 1) return "";
  return "kernel samples need root or perf_event_paranoid <= 1 (it is " + std::to_string(paranoid) +
         ")";
}

}  // namespace sample::e2e
