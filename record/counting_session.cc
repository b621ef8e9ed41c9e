#include "record/counting_session.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "libsample/events/event_spec.h"
#include "libsample/perf/perf_event_advice.h"
#include "libsample/regular_file.h"
#include "libsample/unique_fd.h"
#include "record/target/command_launcher.h"
#include "record/counting/count_file.h"
#include "record/counting/counters.h"
#include "record/counting/toggled_counters.h"
#include "record/facts/host_facts.h"

namespace sample::record {
namespace {

// How often -p/-t targets are checked for having exited.
constexpr uint64_t kTargetCheckIntervalNs = 100'000'000;

// One run of the target: the final counts and how it ended.
struct RunOutcome {
  std::vector<CountedEvent> counts;
  uint64_t elapsed_ns = 0;
  std::optional<double> user_s, sys_s;
  int exit_status = 0;
  bool interrupted = false;  // a stop signal ended it: no further -r runs
};

double Seconds(const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

// What was counted, as perf stat's heading names it.
std::string TargetName(const TargetOptions& target) {
  // With -a a command only sets how long: the machine was counted.
  if (target.all_cpus) return "'system wide'";
  if (!target.command.empty()) {
    std::string words;
    for (const std::string& w : target.command) words += (words.empty() ? "" : " ") + w;
    return "'" + words + "'";
  }
  if (!target.pids.empty()) return "process id '" + target.pids + "'";
  if (!target.tids.empty()) return "thread id '" + target.tids + "'";
  if (!target.cpu_list.empty()) return "'CPU(s) " + target.cpu_list + "'";
  return "'system wide'";
}

// `now` minus `before`, field by field: one interval's counts.
std::vector<CountedEvent> Delta(const std::vector<CountedEvent>& now,
                                const std::vector<CountedEvent>& before) {
  std::vector<CountedEvent> delta = now;
  for (size_t i = 0; i < now.size() && i < before.size(); ++i) {
    delta[i].count -= before[i].count;
    delta[i].enabled -= before[i].enabled;
    delta[i].running -= before[i].running;
  }
  return delta;
}

class CountingSession {
 public:
  CountingSession(const RecordOptions& options, const CountingOptions& stat)
      : options_(options), stat_(stat) {}
  Result<int> Run();

 private:
  Result<void> Prepare();
  Result<RunOutcome> RunOnce();
  Result<void> Wait(RunOutcome* outcome);
  Result<void> PrintInterval(uint64_t now);
  // Every event's counts so far, in specs_ order.
  Result<std::vector<CountedEvent>> ReadAll();
  void EndCommand(RunOutcome* outcome);
  void PrintSummary(const std::vector<RunOutcome>& runs) const;
  Result<void> WriteFile(const std::vector<RunOutcome>& runs) const;

  const RecordOptions& options_;
  const CountingOptions& stat_;
  RecordTarget target_;
  std::vector<EventSpec> specs_;
  // Events counted by EventCounters (all but the toggled ones and their
  // triggers, which ToggledCounters counts inside windows), and their
  // indices in specs_.
  std::vector<EventSpec> plain_specs_;
  std::vector<size_t> plain_index_;
  bool toggled_ = false;
  std::optional<EventCounters> counters_;
  std::optional<ToggledCounters> windows_;
  std::vector<std::string> notes_;
  sigset_t original_mask_{};
  UniqueFd signal_fd_;
  pid_t child_ = -1;
  bool child_done_ = false;
  uint64_t start_ns_ = 0;
  uint64_t first_start_ns_ = 0;             // of the first run
  std::vector<CountedInterval> intervals_;  // -I: the totals at each interval's end
  uint64_t last_interval_ns_ = 0;
  std::vector<CountedEvent> last_counts_;
};

Result<void> CountingSession::Prepare() {
  TRY_ASSIGN(auto target, ResolveTarget(options_.target));
  target_ = std::move(target);
  if (stat_.repeat > 1 && !target_.launches_command) {
    return Fail("-r repeats a command: give one after --");
  }
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&stop_signals, sig);
  sigprocmask(SIG_BLOCK, &stop_signals, &original_mask_);
  signal_fd_ = UniqueFd(signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signal_fd_.valid()) return Fail(fmt::format("signalfd: {}", strerror(errno)));

  EventParseOptions parse;
  const auto paranoid = ReadPerfEventParanoid();
  parse.exclude_kernel_default = KernelExcludedByParanoia(paranoid);
  std::string list;
  for (const std::string& e : options_.events) list += (list.empty() ? "" : ",") + e;
  if (list.empty()) list = DefaultCountingEvents();
  TRY_ASSIGN(auto specs, ParseEventList(list, parse));
  TRY(AttachFilters(options_.events, options_.filters, &specs));
  specs_ = std::move(specs);
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (CountedInWindows(specs_[i])) {
      toggled_ = true;
    } else {
      plain_specs_.push_back(specs_[i]);
      plain_index_.push_back(i);
    }
  }
  // As the recorder says it: counts of user space only are not the same
  // numbers.
  if (!options_.quiet && std::any_of(specs_.begin(), specs_.end(), [](const EventSpec& spec) {
        return spec.kernel_excluded_by_default;
      })) {
    fmt::print(stderr, "{}", UserSpaceOnlyNote(*paranoid, "counting"));
  }
  return {};
}

Result<int> CountingSession::Run() {
  // Refused before counting, not after it.
  if (stat_.write_file) TRY(CheckReplaceable(options_.output, "-o"));
  TRY(Prepare());
  std::vector<RunOutcome> runs;
  for (int i = 0; i < stat_.repeat; ++i) {
    TRY_ASSIGN(auto outcome, RunOnce());
    runs.push_back(std::move(outcome));
    if (runs.back().interrupted) break;
  }
  // -I shows the intervals instead of a final table, as perf stat.
  if (stat_.interval_ms == 0) PrintSummary(runs);
  if (stat_.write_file) TRY(WriteFile(runs));
  return runs.back().exit_status;
}

Result<RunOutcome> CountingSession::RunOnce() {
  std::optional<CommandLauncher> launcher;
  child_done_ = false;
  if (target_.launches_command) {
    TRY_ASSIGN(auto started, CommandLauncher::Start(options_.target.command, original_mask_));
    launcher.emplace(std::move(started));
    child_ = launcher->pid();
    if (target_.kind == TargetKind::kCommand) target_.threads = {child_};
  }
  RunOutcome outcome;
  counters_.reset();
  windows_.reset();
  Result<void> counted;
  if (!plain_specs_.empty()) {
    auto counters = EventCounters::Open(plain_specs_, target_);
    if (counters) {
      counters_.emplace(std::move(*counters));
    } else {
      counted = tl::unexpected(counters.error());
    }
  }
  if (counted && toggled_) {
    auto windows = ToggledCounters::Open(specs_, target_);
    if (windows) {
      windows_.emplace(std::move(*windows));
    } else {
      counted = tl::unexpected(windows.error());
    }
  }
  if (counted) {
    start_ns_ = MonotonicNowNs();
    if (first_start_ns_ == 0) first_start_ns_ = start_ns_;
    last_interval_ns_ = start_ns_;
    last_counts_.clear();
    // Enabled before the command is let go: a command's task counters wait
    // for its exec (enable_on_exec), but a probe counted on every CPU is on
    // only from Enable, and a short command released first ran past it.
    if (counters_) counted = counters_->Enable();
    if (counted && windows_) counted = windows_->Enable();
    if (counted && launcher) counted = launcher->Release();
    if (counted && stat_.interval_ms != 0 && stat_.layout.format == CountFormat::kTable) {
      fmt::print(stderr, "{}", IntervalHeading());
    }
    if (counted) counted = Wait(&outcome);
  }
  if (!counted) {
    // The command must not run on uncounted, or wait for its release forever.
    if (child_ > 0) kill(child_, SIGKILL);
    EndCommand(&outcome);
    return tl::unexpected(counted.error());
  }
  if (counters_) counters_->Disable();
  if (windows_) windows_->Disable();
  EndCommand(&outcome);
  outcome.elapsed_ns = MonotonicNowNs() - start_ns_;
  TRY_ASSIGN(auto counts, ReadAll());
  if (stat_.interval_ms != 0) TRY(PrintInterval(MonotonicNowNs()));
  if (windows_) notes_ = windows_->Notes();
  outcome.counts = std::move(counts);
  return outcome;
}

Result<std::vector<CountedEvent>> CountingSession::ReadAll() {
  std::vector<CountedEvent> counts(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) counts[i].name = specs_[i].name;
  if (counters_) {
    TRY_ASSIGN(auto plain, counters_->Read());
    for (size_t i = 0; i < plain.size(); ++i) counts[plain_index_[i]] = std::move(plain[i]);
  }
  if (windows_) TRY(windows_->Fill(&counts));
  return counts;
}

// Until the command or the attached targets end, --duration runs out or a
// stop signal arrives; prints each interval on the way (-I).
Result<void> CountingSession::Wait(RunOutcome* outcome) {
  const uint64_t stop_at =
      options_.duration_s > 0 ? start_ns_ + static_cast<uint64_t>(options_.duration_s * 1e9) : 0;
  const uint64_t interval_ns = stat_.interval_ms * 1'000'000;
  const bool watching =
      target_.kind == TargetKind::kProcesses || target_.kind == TargetKind::kThreads;
  pollfd fd{signal_fd_.get(), POLLIN, 0};
  while (!child_done_) {
    uint64_t now = MonotonicNowNs();
    if (stop_at != 0 && now >= stop_at) return {};
    uint64_t deadline = UINT64_MAX;
    if (interval_ns != 0) deadline = last_interval_ns_ + interval_ns;
    if (stop_at != 0) deadline = std::min(deadline, stop_at);
    if (watching) deadline = std::min(deadline, now + kTargetCheckIntervalNs);
    // The triggers' rings are emptied as often.
    if (windows_) deadline = std::min(deadline, now + kTargetCheckIntervalNs);
    const int timeout_ms =
        deadline == UINT64_MAX
            ? -1
            : (now >= deadline ? 0 : static_cast<int>((deadline - now) / 1000000));
    if (poll(&fd, 1, timeout_ms) < 0 && errno != EINTR) {
      return Fail(fmt::format("poll: {}", strerror(errno)));
    }
    signalfd_siginfo info;
    while (read(signal_fd_.get(), &info, sizeof(info)) == sizeof(info)) {
      if (info.ssi_signo != SIGCHLD) outcome->interrupted = true;
    }
    if (child_ > 0) {
      int status = 0;
      rusage usage{};
      if (wait4(child_, &status, WNOHANG, &usage) == child_) {
        child_done_ = true;
        outcome->exit_status = ShellStatus(status);
        outcome->user_s = Seconds(usage.ru_utime);
        outcome->sys_s = Seconds(usage.ru_stime);
        child_ = -1;
      }
    }
    if (windows_) windows_->Drain();
    if (outcome->interrupted) return {};
    if (watching && TargetsGone(target_)) return {};
    now = MonotonicNowNs();
    if (interval_ns != 0 && !child_done_ && now >= last_interval_ns_ + interval_ns) {
      TRY(PrintInterval(now));
    }
  }
  return {};
}

Result<void> CountingSession::PrintInterval(uint64_t now) {
  TRY_ASSIGN(auto counts, ReadAll());
  const auto delta = Delta(counts, last_counts_);
  intervals_.push_back({now - start_ns_, counts});
  fmt::print(stderr, "{}",
             FormatCounts(delta, now - last_interval_ns_, stat_.layout, (now - start_ns_) / 1e9));
  last_counts_ = std::move(counts);
  last_interval_ns_ = now;
  return {};
}

// Reaps the command; one still running (a stop signal, --duration) is sent
// SIGTERM first, unless the terminal's SIGINT reached it already.
void CountingSession::EndCommand(RunOutcome* outcome) {
  if (child_ <= 0) return;
  if (!outcome->interrupted) kill(child_, SIGTERM);
  int status = 0;
  rusage usage{};
  if (wait4(child_, &status, 0, &usage) == child_) {
    outcome->exit_status = ShellStatus(status);
    outcome->user_s = Seconds(usage.ru_utime);
    outcome->sys_s = Seconds(usage.ru_stime);
  }
  child_ = -1;
}

// The table, or perf stat's mean and spread over the -r runs.
void CountingSession::PrintSummary(const std::vector<RunOutcome>& runs) const {
  const double n = static_cast<double>(runs.size());
  std::vector<CountedEvent> mean = runs.front().counts;
  CountTimes times;
  std::vector<double> elapsed;
  double user = 0, sys = 0;
  for (const RunOutcome& run : runs) {
    elapsed.push_back(run.elapsed_ns / 1e9);
    times.elapsed_s += run.elapsed_ns / 1e9 / n;
    user += run.user_s.value_or(0) / n;
    sys += run.sys_s.value_or(0) / n;
  }
  if (runs.front().user_s) {
    times.user_s = user;
    times.sys_s = sys;
  }
  if (runs.size() > 1) {
    times.elapsed_spread_s = SpreadPercent(elapsed) * times.elapsed_s / 100;
    for (size_t i = 0; i < mean.size(); ++i) {
      std::vector<double> scaled;
      double count = 0, enabled = 0, running = 0;
      for (const RunOutcome& run : runs) {
        const CountedEvent& c = run.counts[i];
        scaled.push_back(ScaledCount(c).value_or(0));
        count += c.count / n;
        enabled += c.enabled / n;
        running += c.running / n;
      }
      mean[i].count = static_cast<uint64_t>(std::llround(count));
      mean[i].enabled = static_cast<uint64_t>(std::llround(enabled));
      mean[i].running = static_cast<uint64_t>(std::llround(running));
      if (mean[i].supported) mean[i].spread_pct = SpreadPercent(scaled);
    }
  }
  if (stat_.layout.format != CountFormat::kTable) {
    const auto elapsed_ns = static_cast<uint64_t>(times.elapsed_s * 1e9);
    fmt::print(stderr, "{}", FormatCounts(mean, elapsed_ns, stat_.layout));
    return;
  }
  fmt::print(
      stderr, "{}",
      FormatCountTable(TargetName(options_.target), mean, times, static_cast<int>(runs.size())));
  for (const std::string& note : notes_) fmt::print(stderr, "note: {}\n", note);
}

// The totals of every run (-r: summed, so that enabled and running still
// scale the count) and the intervals of -I.
Result<void> CountingSession::WriteFile(const std::vector<RunOutcome>& runs) const {
  std::vector<CountedEvent> totals = runs.front().counts;
  uint64_t elapsed_ns = runs.front().elapsed_ns;
  for (size_t r = 1; r < runs.size(); ++r) {
    elapsed_ns += runs[r].elapsed_ns;
    for (size_t i = 0; i < totals.size(); ++i) {
      totals[i].count += runs[r].counts[i].count;
      totals[i].enabled += runs[r].counts[i].enabled;
      totals[i].running += runs[r].counts[i].running;
    }
  }
  const format::Counts counts = MakeCounts(specs_, totals, intervals_, elapsed_ns,
                                           target_.kind == TargetKind::kCommand, target_.inherit);
  return WriteCountsFile(options_.output, specs_, counts, options_.invocation, first_start_ns_);
}

}  // namespace

Result<int> RunCounting(const RecordOptions& options, const CountingOptions& stat) {
  CountingSession session(options, stat);
  return session.Run();
}

}  // namespace sample::record
