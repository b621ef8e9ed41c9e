#include "record/facts/host_facts.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include "libsample/cpu_list.h"
#include "libsample/perf/perf_event_advice.h"
#include "libsample/symbols/perf_map.h"

namespace sample::record {
namespace {

uint64_t ClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace

uint64_t MonotonicNowNs() { return ClockNs(CLOCK_MONOTONIC); }

format::Metadata CollectHostFacts(const std::vector<std::string>& command_line) {
  format::Metadata facts;
  utsname uts{};
  if (uname(&uts) == 0) {
    facts.emplace_back("hostname", uts.nodename);
    facts.emplace_back("os_release", uts.release);
    facts.emplace_back("os_version", uts.version);
    facts.emplace_back("arch", uts.machine);
  }
  if (auto cpus = OnlineCpus()) facts.emplace_back("cpus_online", fmt::format("{}", cpus->size()));
  std::string cmdline;
  for (const std::string& arg : command_line) {
    if (!cmdline.empty()) cmdline += ' ';
    cmdline += arg;
  }
  facts.emplace_back("cmdline", cmdline);
  facts.emplace_back("start_realtime_ns", fmt::format("{}", ClockNs(CLOCK_REALTIME)));
  facts.emplace_back("start_clock_ns", fmt::format("{}", MonotonicNowNs()));
  facts.emplace_back("page_size", fmt::format("{}", sysconf(_SC_PAGESIZE)));
  // This boot: a report of a file that was never closed (and so holds no
  // kernel symbols) may read this host's table when it runs on this boot.
  if (const std::string boot = BootId(); !boot.empty()) facts.emplace_back("kernel_boot_id", boot);
  // The depth at which the kernel cut call chains of events that set no
  // sample_max_stack: the report counts the chains that reached it.
  if (const auto max_stack = ReadPerfEventMaxStack()) {
    facts.emplace_back("perf_event_max_stack", fmt::format("{}", *max_stack));
  }
  facts.emplace_back("recorder_version", "sample-record 0.1.0");
  return facts;
}

}  // namespace sample::record
