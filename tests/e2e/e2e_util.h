// Helpers for end-to-end tests: run the built tools in a scratch directory
// and pick apart their text output.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace sample::e2e {

// Built under AddressSanitizer (scripts/test_sanitized.sh), where the tools
// run slower and use ASan's memory: tests of timing and memory figures say
// so and skip (their logic still runs in the normal build).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif


struct RunResult {
  int exit_code = -1;  // shell style: 128 + signal when killed
  std::string out;
  std::string err;
};

// A fresh directory under $TMPDIR, removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The setpriv(1) that runs commands as user nobody.
inline constexpr const char* kSetpriv = "/usr/bin/setpriv";

// argv run as user nobody (uid/gid 65534, no groups), holding
// `capability` (setpriv's name, e.g. "perfmon") when one is given.
std::vector<std::string> AsNobody(std::vector<std::string> argv,
                                  const std::string& capability = "");

// A directory under /tmp owned by user nobody (mode 0755), for runs as
// nobody: the checkout, and so the build, may be in a directory other users
// cannot enter (a 0700 mktemp directory or home), so what nobody runs is
// copied here. Removed with its contents on destruction; path() is empty
// when it could not be made.
class NobodyDir {
 public:
  NobodyDir();
  ~NobodyDir();
  NobodyDir(const NobodyDir&) = delete;
  NobodyDir& operator=(const NobodyDir&) = delete;
  const std::string& path() const { return path_; }
  // Copies the executable `from` in as `name` (mode 0755); false on failure.
  bool Copy(const std::string& from, const std::string& name);

 private:
  std::string path_;
};

// The whole text of `path` ("" when it cannot be read).
std::string ReadFile(const std::string& path);

// Runs argv to completion, capturing stdout and stderr through files in `dir`.
RunResult RunTool(const std::vector<std::string>& argv, const ScratchDir& dir);

// Starts argv in its own process group with output going to files in `dir`;
// returns the pid. Collect it with Wait().
pid_t Start(const std::vector<std::string>& argv, const ScratchDir& dir, const std::string& tag);
RunResult Wait(pid_t pid, const ScratchDir& dir, const std::string& tag);

// The percentage in the first column of the flat-profile row whose last
// column is `symbol` ("[.] name" is matched on the name), or nullopt.
std::optional<double> OverheadOf(const std::string& report, const std::string& symbol);

// The first-column percentage of the first row containing every one of
// `parts`, or nullopt.
std::optional<double> OverheadOfRow(const std::string& report,
                                    const std::vector<std::string>& parts);

// `word` quoted for /bin/sh (paths may hold spaces or quotes).
std::string ShellQuote(const std::string& word);

// Lines of `text`.
std::vector<std::string> Lines(const std::string& text);

// Why this user cannot sample the kernel here (not root and
// perf_event_paranoid above 1), or empty when it can.
std::string KernelSamplesUnavailable();

// The "# Samples: N" figure of a report header, or -1.
long SampleCount(const std::string& report);

// Probes of what this kernel and machine offer, made directly (tracefs and
// perf_event_open(2) on the calling thread), not through the recorder: a
// test skips only for a capability a probe of its own shows missing, so a
// regression of the recorder that prints a similar message still fails.
// The *Unavailable() ones return why the capability is missing, or "" when
// it is there (or when the probe failed for another reason: then the test
// runs, and says what fails).

// Tracepoint SUBSYSTEM:NAME: tracefs (mounted at /sys/kernel/tracing first
// when this user may, as the recorder does), its events/SUBSYSTEM/NAME/id,
// and a sampling event on it, with its raw data when `raw_data` (which the
// kernel may refuse a user it lets count or sample the tracepoint).
std::string TracepointUnavailable(const std::string& subsystem, const std::string& name,
                                  bool raw_data = true);
// A hardware write breakpoint: it opens, and it counts stores to a
// variable of this process (some VMs accept one and never fire it).
std::string BreakpointUnavailable();
// The cgroup-switches software event (Linux 5.13+).
std::string CgroupSwitchesUnavailable();
// Linux perf, the reference of the differential tests.
inline constexpr const char* kPerf = "/usr/bin/perf";
// Why perf cannot record here (not installed, or perf record fails on
// /bin/true), or "" when it can.
const std::string& PerfUnusable();

// Whether the hardware cycles event opens here (a PMU; VMs often have
// none).
bool HardwareCyclesOpen();

// The CPU time (user and system, in seconds) the processes of process group
// `pgid` other than `leader` have used so far: what Start()'s child, the
// recorder, runs as its command. 0 when there are none yet.
double CommandCpuSeconds(pid_t pgid, pid_t leader);

// Sleeps until CommandCpuSeconds(pgid, leader) reaches `seconds` or the
// leader has ended; false in the latter case. Tests that stop a recording
// "after a while" wait for the command's CPU time, not the wall clock: on a
// loaded machine the command gets a fraction of a CPU, and what its samples
// hold follows its CPU time.
bool WaitForCommandCpu(pid_t pgid, pid_t leader, double seconds);

}  // namespace sample::e2e
