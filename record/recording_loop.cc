#include "record/recording_loop.h"

#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "record/facts/host_facts.h"
#include "record/record_summary.h"

namespace sample::record {
namespace {

// A chunk goes to the writer when it is full (RingDrainer) or this old, so
// a killed recorder loses at most the last half second; the first chunk
// with records goes sooner, so that a recorder killed early (a crash in the
// first half second, a kill soon after the start) still leaves samples.
constexpr uint64_t kChunkMaxAgeNs = 500'000'000;
constexpr uint64_t kFirstChunkMaxAgeNs = 100'000'000;
constexpr uint64_t kStatusIntervalNs = 500'000'000;
constexpr uint64_t kFlushRetryNs = 1'000'000;
// How often -p/-t targets are checked for having exited (a /proc read per
// target): each wakeup would cost a file open per target.
constexpr uint64_t kTargetCheckIntervalNs = 100'000'000;

}  // namespace

Result<UniqueFd> BlockRecordingSignals(bool snapshots, sigset_t* original_mask) {
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&signals, sig);
  if (snapshots) sigaddset(&signals, SIGUSR2);
  sigprocmask(SIG_BLOCK, &signals, original_mask);
  UniqueFd fd(signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd.valid()) return Fail(fmt::format("signalfd: {}", strerror(errno)));
  return fd;
}

RecordingLoop::RecordingLoop(LoopParts parts)
    : parts_(std::move(parts)),
      watching_targets_(parts_.target.kind == TargetKind::kProcesses ||
                        parts_.target.kind == TargetKind::kThreads),
      max_age_(parts_.sink.chunk_max_age_ns() != 0
                   ? std::min(parts_.sink.chunk_max_age_ns(), kFirstChunkMaxAgeNs)
                   : kFirstChunkMaxAgeNs) {
  const RecordOptions& options = parts_.options;
  // -D -1 waits for --control's enable; --duration counts from the start.
  const uint64_t enable_at =
      options.start_disabled ? parts_.start_ns : parts_.start_ns + options.delay_ms * 1000000;
  const bool timed_start = options.delay_ms != 0 && !options.start_disabled;

  loop_.AddFd(parts_.signal_fd, [this] { return OnSignals(); });
  if (parts_.control.fd() >= 0) loop_.AddFd(parts_.control.fd(), [this] { return OnControl(); });
  if (parts_.control.channel_fd() >= 0) {
    loop_.AddFd(parts_.control.channel_fd(), [this] { return OnControl(); });
  }
  for (size_t owner : parts_.opener.ring_owners()) {
    // Readiness only wakes the loop: every ring is drained at each wakeup.
    loop_.AddFd(
        parts_.opener.events()[owner].fd(),
        [this]() -> Result<void> {
          ring_woke_ = true;
          return {};
        },
        [this]() -> Result<void> {
          if (watching_targets_) loop_.SetTimer(target_timer_, 0);
          return {};
        });
  }
  for (PerfEvent& waker : parts_.opener.exec_wakers()) {
    // An exec: its process's namespace is noted now, while it lives.
    // (Its task gone, the waker hangs up for good: polled no more.)
    loop_.AddFd(
        waker.fd(),
        [this, &waker]() -> Result<void> {
          parts_.drainer.NoteExecs(waker.ring());
          exec_woke_ = true;
          return {};
        },
        []() -> Result<void> { return {}; });
  }
  loop_.AddWakeupHandler([this]() -> Result<void> {
    // A pass only execs woke: the rings wait for their own wakeup or the
    // timers (a build's execs would otherwise drain every ring hundreds of
    // times a second).
    const bool execs_only = exec_woke_ && !ring_woke_;
    exec_woke_ = ring_woke_ = false;
    if (!execs_only) Drain();
    return {};
  });
  loop_.AddWakeupHandler([this]() -> Result<void> {
    ShowStatus();
    return {};
  });
  enable_timer_ = loop_.AddTimer(timed_start ? enable_at : EventLoop::kNever,
                                 [this](uint64_t) { return StartSampling(); });
  if (options.duration_s > 0) {
    loop_.AddTimer(enable_at + static_cast<uint64_t>(options.duration_s * 1e9),
                   [this](uint64_t) -> Result<void> {
                     loop_.Stop();
                     return {};
                   });
  }
  // The first check at once, as the targets may be gone already.
  target_timer_ = loop_.AddTimer(watching_targets_ ? 0 : EventLoop::kNever,
                                 [this](uint64_t now) -> Result<void> {
                                   CheckTargets(now);
                                   return {};
                                 });
  flush_timer_ = loop_.AddTimer(parts_.start_ns + max_age_, [this](uint64_t now) -> Result<void> {
    FlushChunk(now);
    return {};
  });
  // A cut of the output: at once for SIGUSR2 and the 'snapshot' command,
  // or every CutPolicy::every_ns.
  const CutPolicy& cut = cut_policy_;
  cut_timer_ = loop_.AddTimer(cut.every_ns != 0 ? parts_.start_ns + cut.every_ns : EventLoop::kNever,
                              [this](uint64_t now) -> Result<void> {
                                CutOutput(now);
                                return {};
                              });
}

Result<StopCause> RecordingLoop::Run() {
  if (const auto nice = RequestShortSlice()) {
    parts_.sink.SetWriterNice(*nice);  // the writer keeps up beside the drain
  }
  TRY(loop_.Run());
  return cause_;
}

Result<void> RecordingLoop::OnSignals() {
  signalfd_siginfo info;
  while (read(parts_.signal_fd, &info, sizeof(info)) == sizeof(info)) {
    if (info.ssi_signo == SIGUSR2) {
      if (cut_policy_.on_signal) loop_.SetTimer(cut_timer_, 0);
    } else if (info.ssi_signo != SIGCHLD) {
      cause_.stop_signal = static_cast<int>(info.ssi_signo);
      loop_.Stop();
    }
  }
  if (parts_.child > 0 && waitpid(parts_.child, &cause_.child_status, WNOHANG) == parts_.child) {
    cause_.child_done = true;
    loop_.Stop();
  }
  return {};
}

Result<void> RecordingLoop::OnControl() {
  TRY_ASSIGN(const bool stop_commanded, parts_.control.RunCommands());
  if (stop_commanded) loop_.Stop();
  // A command that switched sampling overrides -D's timer.
  if (parts_.control.commanded()) loop_.SetTimer(enable_timer_, EventLoop::kNever);
  if (parts_.control.TakeSnapshotRequest() && cut_policy_.kind == CutPolicy::Kind::kSnapshot) {
    snapshot_commanded_ = true;
    loop_.SetTimer(cut_timer_, 0);
  }
  return {};
}

// -D: the delay is over.
Result<void> RecordingLoop::StartSampling() {
  TRY(parts_.opener.EnableAll());
  parts_.control.Switched(/*on=*/true, MonotonicNowNs());
  return {};
}

void RecordingLoop::CheckTargets(uint64_t now) {
  if (TargetsGone(parts_.target)) {
    cause_.child_done = true;
    loop_.Stop();
  }
  loop_.SetTimer(target_timer_, now + kTargetCheckIntervalNs);
}

void RecordingLoop::Drain() {
  parts_.drainer.DrainAll();
  if (parts_.drainer.chunk_full()) FlushChunk(MonotonicNowNs());
}

void RecordingLoop::FlushChunk(uint64_t now) {
  const bool had_records = !parts_.drainer.chunk_empty();
  if (parts_.drainer.Flush(/*wait=*/false)) {
    if (had_records) {
      const uint64_t sink_age = parts_.sink.chunk_max_age_ns();
      max_age_ = sink_age != 0 ? sink_age : kChunkMaxAgeNs;
    }
    loop_.SetTimer(flush_timer_, now + max_age_);
  } else {
    // The writer holds its lock: try again in a millisecond (not at once:
    // the deadline has passed, and polling with no wait would spin against
    // the writer we wait for).
    loop_.SetTimer(flush_timer_, now + kFlushRetryNs);
  }
  if (parts_.sink.failed()) {
    cause_.write_failed = true;
    loop_.Stop();
  }
  if (cut_policy_.at_bytes != 0 && parts_.sink.current_bytes() >= cut_policy_.at_bytes) {
    loop_.SetTimer(cut_timer_, 0);
  }
}

void RecordingLoop::CutOutput(uint64_t now) {
  auto cut = parts_.cut();
  if (cut_policy_.kind == CutPolicy::Kind::kNextFile) {
    // A failed switch ends the recording as a failed write does (the files
    // closed before it are whole); Finish says why.
    if (!cut) {
      fmt::print(stderr, "sample-record: --switch-output: {}\n", cut.error().message);
      cause_.write_failed = true;
      loop_.Stop();
      return;
    }
  } else {
    // A failed snapshot is said and answered; recording goes on.
    if (!cut) parts_.sink.SayCutFailed(cut.error().message);
    if (snapshot_commanded_) parts_.control.AnswerSnapshot(cut.has_value());
    snapshot_commanded_ = false;
  }
  loop_.SetTimer(cut_timer_,
                 cut_policy_.every_ns != 0 ? now + cut_policy_.every_ns : EventLoop::kNever);
  loop_.SetTimer(flush_timer_, MonotonicNowNs() + max_age_);
}

void RecordingLoop::ShowStatus() {
  const uint64_t now = MonotonicNowNs();
  if (!parts_.status_line || now - last_status_ns_ < kStatusIntervalNs) return;
  last_status_ns_ = now;
  uint64_t samples = 0, lost = 0;
  for (const CpuCounters& c : parts_.drainer.counters()) {
    samples += c.samples;
    lost += c.lost_samples + c.dropped_samples;
  }
  const std::string kept = parts_.sink.Held();
  fmt::print(stderr, "\r[ recording: {:.1f} s, {} samples, {} lost, {} ]\033[K",
             (now - parts_.start_ns) / 1e9, samples, lost, kept);
  std::fflush(stderr);
}

}  // namespace sample::record
