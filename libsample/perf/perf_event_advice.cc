#include "libsample/perf/perf_event_advice.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "libsample/perf/capabilities.h"

namespace sample {
namespace {

std::optional<long> ReadProcNumber(const char* path) {
  std::ifstream in(path);
  long value;
  if (in >> value) return value;
  return std::nullopt;
}

std::string EventKind(const perf_event_attr& attr) {
  switch (attr.type) {
    case PERF_TYPE_HARDWARE:
    case PERF_TYPE_HW_CACHE:
      return "hardware event";
    case PERF_TYPE_SOFTWARE:
      return "software event";
    case PERF_TYPE_TRACEPOINT:
      return "tracepoint";
    case PERF_TYPE_BREAKPOINT:
      return "breakpoint";
    case PERF_TYPE_RAW:
      return "raw event";
    default:
      return fmt::format("event of PMU type {}", attr.type);
  }
}

// EINVAL for an event that samples user registers and stack: the stack size
// is the likely culprit when it breaks the kernel's rules (a multiple of 8
// below 65535), else the register mask or the kernel's support for either.
std::string ChainCaptureAdvice(const std::string& what, const perf_event_attr& attr) {
  const uint32_t size = attr.sample_stack_user;
  if ((attr.sample_type & PERF_SAMPLE_STACK_USER) && (size % 8 != 0 || size >= 65535)) {
    return fmt::format(
        "{}.\n  The user stack size {} is not one the kernel takes: a multiple of 8 below "
        "65535 (--call-graph dwarf,SIZE or stack-size=SIZE; at most 65528).",
        what, size);
  }
  return fmt::format(
      "{}.\n  The kernel rejected the call-graph attributes (user registers {:#x}, {} bytes of "
      "user stack): it may not support them for this event or architecture. Use --call-graph "
      "fp, or a smaller stack size.",
      what, attr.sample_regs_user, size);
}

}  // namespace

std::optional<int> ReadPerfEventParanoid() {
  auto value = ReadProcNumber("/proc/sys/kernel/perf_event_paranoid");
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

bool KernelExcludedByParanoia(std::optional<int> paranoid) {
  return paranoid && *paranoid >= 2 && !PerfmonCapable();
}

std::string UserSpaceOnlyNote(int paranoid, const char* doing) {
  return fmt::format(
      "sample-record: kernel.perf_event_paranoid is {}: {} user space only (sysctl "
      "kernel.perf_event_paranoid=1 or CAP_PERFMON to include the kernel).\n",
      paranoid, doing);
}

std::optional<int> ReadPerfEventMaxStack() {
  auto value = ReadProcNumber("/proc/sys/kernel/perf_event_max_stack");
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

std::string ExplainPerfEventOpenError(int err, const perf_event_attr& attr, pid_t pid, int cpu) {
  const std::string what = fmt::format("perf_event_open ({}, pid {}, cpu {}) failed: {}",
                                       EventKind(attr), pid, cpu, strerror(err));
  switch (err) {
    case EACCES:
    case EPERM: {
      const auto paranoid = ReadPerfEventParanoid();
      std::string level = paranoid ? fmt::format("{}", *paranoid) : "unknown";
      if (pid == -1) {
        // System-wide events need level 0 (perf_allow_cpu), even for user space.
        return fmt::format(
            "{}.\n  kernel.perf_event_paranoid is {}. Profiling every process (-a, -C) needs "
            "level 0 or lower:\n"
            "    sysctl -w kernel.perf_event_paranoid=0\n"
            "  or CAP_PERFMON (Linux 5.8+) or root. Without them, profile a command or your "
            "own processes (-p PID) instead.",
            what, level);
      }
      // Another user's process: the kernel's ptrace check refuses it at
      // any paranoid level; no sysctl helps, only CAP_SYS_PTRACE.
      struct stat owner {};
      if (pid > 0 && stat(fmt::format("/proc/{}", pid).c_str(), &owner) == 0 &&
          owner.st_uid != geteuid()) {
        return fmt::format(
            "{}.\n  Process {} belongs to uid {}, not to you (uid {}): profiling another "
            "user's process needs CAP_SYS_PTRACE as well as CAP_PERFMON (setcap "
            "cap_perfmon,cap_sys_ptrace+ep on sample-record), or root.",
            what, pid, owner.st_uid, geteuid());
      }
      return fmt::format(
          "{}.\n  kernel.perf_event_paranoid is {}. Profiling {} needs a lower level or "
          "privilege:\n"
          "    sysctl -w kernel.perf_event_paranoid=1   (own processes, kernel too)\n"
          "    sysctl -w kernel.perf_event_paranoid=-1  (everything)\n"
          "  or run with CAP_PERFMON (Linux 5.8+) or as root. Recording user space only "
          "(event modifier :u) is allowed at level 2.",
          what, level, attr.exclude_kernel ? "this target" : "the kernel");
    }
    case ENOENT:
    case EOPNOTSUPP:
      if (attr.type == PERF_TYPE_HARDWARE || attr.type == PERF_TYPE_HW_CACHE ||
          attr.type == PERF_TYPE_RAW) {
        return fmt::format(
            "{}.\n  This machine has no hardware PMU for this event (common in VMs). "
            "Use a software event such as -e cpu-clock.",
            what);
      }
      return fmt::format("{}.\n  The kernel does not support this event here.", what);
    case ESRCH:
      return fmt::format("{}.\n  No such process or thread: did it exit already?", what);
    case EMFILE:
      return fmt::format(
          "{}.\n  Too many open files: raise the limit with 'ulimit -n' or profile fewer "
          "CPUs or threads.",
          what);
    case EINVAL:
      if (attr.freq) {
        auto max_rate = ReadProcNumber("/proc/sys/kernel/perf_event_max_sample_rate");
        if (max_rate && static_cast<long>(attr.sample_freq) > *max_rate) {
          return fmt::format(
              "{}.\n  The frequency {} Hz is above kernel.perf_event_max_sample_rate ({}). "
              "Use a lower -F or raise the sysctl.",
              what, attr.sample_freq, *max_rate);
        }
      }
      if (attr.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) {
        return ChainCaptureAdvice(what, attr);
      }
      return fmt::format("{}.\n  The kernel rejected the event's attributes.", what);
    case ENOSYS:
      if (attr.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) {
        return fmt::format(
            "{}.\n  This kernel cannot sample user registers or copy user stacks on this "
            "architecture, which --call-graph dwarf and fp,leaf need. Use --call-graph fp.",
            what);
      }
      return what + ".";
    case ENODEV:
      return fmt::format("{}.\n  CPU {} is offline or does not exist.", what, cpu);
    case EBUSY:
      return fmt::format("{}.\n  Another user holds this PMU exclusively.", what);
    default:
      return what + ".";
  }
}

std::string ExplainPerfMmapError(int err, size_t data_pages) {
  const std::string what =
      fmt::format("mmap of a {} KiB perf ring buffer failed: {}",
                  data_pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)) / 1024, strerror(err));
  if (err == EPERM || err == ENOMEM) {
    rlimit limit{};
    getrlimit(RLIMIT_MEMLOCK, &limit);
    auto mlock_kb = ReadProcNumber("/proc/sys/kernel/perf_event_mlock_kb");
    return fmt::format(
        "{}.\n  Ring buffers count against kernel.perf_event_mlock_kb ({} KiB per user) and "
        "the locked-memory limit (ulimit -l: {} KiB). Use fewer pages with -m, raise "
        "the sysctl, or run with CAP_IPC_LOCK.",
        what, mlock_kb ? fmt::format("{}", *mlock_kb) : "unknown",
        limit.rlim_cur == RLIM_INFINITY ? std::string("unlimited")
                                        : fmt::format("{}", limit.rlim_cur / 1024));
  }
  return what + ".";
}

}  // namespace sample
