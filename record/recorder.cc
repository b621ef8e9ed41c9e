#include "record/recorder.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "formats/sample_file_writer.h"
#include "libsample/events/event_spec.h"
#include "libsample/perf/perf_event.h"
#include "libsample/perf/perf_event_advice.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"
#include "libsample/unique_fd.h"
#include "record/command_launcher.h"
#include "record/event_opener.h"
#include "record/host_facts.h"
#include "record/postmortem_facts.h"
#include "record/proc_synthesis.h"
#include "record/record_summary.h"
#include "record/ring_drainer.h"

namespace sample::record {
namespace {

// A chunk goes to the writer when it is full (RingDrainer) or this old, so
// a killed recorder loses at most the last half second.
constexpr uint64_t kChunkMaxAgeNs = 500'000'000;
constexpr uint64_t kStatusIntervalNs = 500'000'000;
constexpr uint64_t kFlushRetryNs = 1'000'000;
// How often -p/-t targets are checked for having exited (a /proc read per
// target): each wakeup would cost a file open per target.
constexpr uint64_t kTargetCheckIntervalNs = 100'000'000;

// How a recording ended: the command's wait status (when there is a
// command and it ended), the stop signal that arrived, if any.
struct StopCause {
  bool child_done = false;
  int child_status = 0;
  int stop_signal = 0;
};

// One recording. Run() is the three stages: Prepare (target, output file,
// command held before exec, events, the file's first chunks), Record (the
// draining loop, until the target ends, the duration runs out or a signal
// arrives) and Finish (the last drain, the command's end, the trailer).
// A failure at any stage goes through Abandon, the one exit that stops the
// command and leaves either a finished file or none.
class Recorder {
 public:
  explicit Recorder(const RecordOptions& options) : options_(options) {}
  Result<RecordSummary> Run();

 private:
  Result<void> Prepare();
  Result<void> OpenEvents();
  Result<StopCause> Record();
  Result<void> Start();
  Result<void> StartSampling();
  void StopAndDrain();
  void ShowStatus(uint64_t now);
  int EndCommand(const StopCause& cause);
  Result<RecordSummary> Finish(int exit_status);
  Result<RecordSummary> Abandon(Error error);

  const RecordOptions& options_;
  RecordTarget target_;
  std::optional<EventOpener> opener_;
  std::unique_ptr<format::SampleFileWriter> writer_;
  std::optional<CommandLauncher> launcher_;
  pid_t child_ = -1;  // the command, once launched
  sigset_t original_mask_{};
  UniqueFd signal_fd_;  // stop signals and SIGCHLD
  PostmortemFacts facts_;
  bool status_line_ = false;
  bool started_ = false;  // events on: from here a failure keeps the file
  uint64_t start_ns_ = 0;
  uint64_t last_status_ns_ = 0;

  std::optional<RingDrainer> drainer_;  // once the events are open
};

Result<void> Recorder::OpenEvents() {
  SamplingDefaults defaults;
  defaults.frequency = options_.frequency;
  defaults.period = options_.period;
  defaults.chain_capture = options_.chain_capture;
  defaults.delayed = options_.delay_ms != 0;
  defaults.switch_events = options_.switch_events;
  defaults.mmap_pages = options_.mmap_pages;
  EventParseOptions parse;
  const auto paranoid = ReadPerfEventParanoid();
  parse.exclude_kernel_default = KernelExcludedByParanoia(paranoid);
  const bool default_event = options_.events.empty();
  std::string list = default_event ? "cycles" : "";
  for (const std::string& e : options_.events) list += (list.empty() ? "" : ",") + e;

  auto open = [&](const std::string& text) -> Result<void> {
    TRY_ASSIGN(auto specs, ParseEventList(text, parse));
    TRY_ASSIGN(auto opener, EventOpener::Create(std::move(specs), defaults, target_));
    opener_.emplace(std::move(opener));
    return opener_->Open(target_);
  };
  auto opened = open(list);
  const int err = opened ? 0 : opened.error().sys_errno;
  if (!opened && default_event && (err == ENOENT || err == EOPNOTSUPP)) {
    // perf does the same: no PMU (typical in VMs) means a timer-based event.
    if (!options_.quiet) {
      fmt::print(stderr,
                 "sample-record: the hardware event 'cycles' is not available here (no PMU); "
                 "using cpu-clock instead.\n");
    }
    opened = open("cpu-clock");
  }
  if (!opened) return opened;
  // Said once the events are open, and only of events it applies to (not
  // of tracepoints, nor of events given u/k/h).
  const auto& specs = opener_->specs();
  if (!options_.quiet && std::any_of(specs.begin(), specs.end(), [](const EventSpec& spec) {
        return spec.kernel_excluded_by_default;
      })) {
    fmt::print(stderr, "{}", UserSpaceOnlyNote(*paranoid, "recording"));
  }
  return {};
}

// Turns the events on (unless enable_on_exec does it; with -D only the
// sideband-tracking event, sampling comes in StartSampling) and, for
// targets that were running before us, describes them from /proc. Enabling
// first means a mapping created meanwhile is reported by the kernel; one
// described twice is harmless.
Result<void> Recorder::Start() {
  const uint64_t now = MonotonicNowNs();
  auto enabled = options_.delay_ms == 0 ? opener_->EnableAll() : opener_->EnableTracking();
  if (!enabled) return enabled;
  started_ = true;
  if (target_.kind == TargetKind::kCommand) return {};
  std::vector<std::byte> synthesized;
  const perf_event_attr& attr = opener_->first_attr();
  ProcSynthesizer synthesizer(attr, opener_->events().front().id(), now);
  if (target_.synthesize_all) {
    synthesizer.AddAllProcesses(synthesized);
  } else {
    for (pid_t pid : target_.processes) synthesizer.AddProcess(pid, synthesized);
  }
  const auto counts = synthesizer.counts();
  ForEachRecord(synthesized, [&](const perf_event_header& h, std::span<const std::byte> r) {
    facts_.Observe(h, r, attr);
  });
  format::RecordsChunk chunk;
  chunk.record_count = counts.threads + counts.mappings;
  chunk.time_min = chunk.time_max = now;
  chunk.cpu_field = opener_->cpu_field();
  chunk.cpu_runs.push_back({synthesized.size(), 0});  // CPU 0, as perf's synthesized records
  chunk.records = std::move(synthesized);
  writer_->SubmitRecords(std::move(chunk));
  drainer_->CountWritten(counts.threads + counts.mappings);
  return {};
}

// -D: the delay is over.
Result<void> Recorder::StartSampling() { return opener_->EnableAll(); }

void Recorder::ShowStatus(uint64_t now) {
  if (!status_line_ || now - last_status_ns_ < kStatusIntervalNs) return;
  last_status_ns_ = now;
  uint64_t samples = 0, lost = 0;
  for (const CpuCounters& c : drainer_->counters()) {
    samples += c.samples;
    lost += c.lost_samples + c.dropped_samples;
  }
  fmt::print(stderr, "\r[ recording: {:.1f} s, {} samples, {} lost, {} written ]\033[K",
             (now - start_ns_) / 1e9, samples, lost, HumanBytes(writer_->bytes_written()));
  std::fflush(stderr);
}

int ShellStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

Result<RecordSummary> Recorder::Run() {
  if (auto prepared = Prepare(); !prepared) return Abandon(prepared.error());
  auto stopped = Record();
  if (!stopped) return Abandon(stopped.error());
  StopAndDrain();
  return Finish(EndCommand(*stopped));
}

Result<void> Recorder::Prepare() {
  TRY_ASSIGN(auto target, ResolveTarget(options_.target));
  target_ = std::move(target);
  status_line_ = !options_.quiet && isatty(STDERR_FILENO);

  // Stop signals and SIGCHLD arrive through a signalfd polled with the
  // ring buffers; a command gets the original mask back before exec.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&stop_signals, sig);
  sigprocmask(SIG_BLOCK, &stop_signals, &original_mask_);
  signal_fd_ = UniqueFd(signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signal_fd_.valid()) return Fail(fmt::format("signalfd: {}", strerror(errno)));

  TRY(MoveOldOutput(options_.output));
  format::WriterOptions writer_options;
  writer_options.zstd_level = options_.zstd_level;
  // Compression yields to the draining thread (and to the target): a 4 MiB
  // chunk takes milliseconds of zstd, as long as a small buffer lasts.
  writer_options.nice_increment = 10;
  TRY_ASSIGN(auto writer, format::SampleFileWriter::Create(options_.output, writer_options));
  writer_ = std::move(writer);

  if (target_.kind == TargetKind::kCommand) {
    TRY_ASSIGN(auto launcher, CommandLauncher::Start(options_.target.command, original_mask_));
    child_ = launcher.pid();
    launcher_.emplace(std::move(launcher));
    target_.threads = {child_};
  }

  if (auto opened = OpenEvents(); !opened) return opened;
  writer_->Submit(format::ChunkType::kEvents, format::EncodeEvents(opener_->DescribeFile()));
  writer_->Submit(format::ChunkType::kMetadata,
                  format::EncodeMetadata(CollectHostFacts(options_.invocation)));
  drainer_.emplace(*opener_, target_.cpus, *writer_, facts_);
  return {};
}

Result<StopCause> Recorder::Record() {
  start_ns_ = MonotonicNowNs();
  if (launcher_) {
    TRY(launcher_->Release());
  }
  const uint64_t enable_at = start_ns_ + options_.delay_ms * 1000000;
  TRY(Start());
  bool sampling = options_.delay_ms == 0;
  const uint64_t stop_at =
      options_.duration_s > 0 ? enable_at + static_cast<uint64_t>(options_.duration_s * 1e9) : 0;

  std::vector<pollfd> fds;
  fds.push_back({signal_fd_.get(), POLLIN, 0});
  for (size_t owner : opener_->ring_owners()) {
    fds.push_back({opener_->events()[owner].fd(), POLLIN, 0});
  }

  StopCause cause;
  uint64_t last_flush_ns = start_ns_;
  uint64_t last_target_check_ns = 0;
  const bool watching_targets =
      target_.kind == TargetKind::kProcesses || target_.kind == TargetKind::kThreads;
  RequestShortSlice();
  while (!cause.child_done && cause.stop_signal == 0) {
    uint64_t now = MonotonicNowNs();
    if (!sampling && now >= enable_at) {
      TRY(StartSampling());
      sampling = true;
    }
    if (stop_at != 0 && now >= stop_at) break;
    uint64_t deadline = last_flush_ns + kChunkMaxAgeNs;
    if (!sampling) deadline = std::min(deadline, enable_at);
    if (stop_at != 0) deadline = std::min(deadline, stop_at);
    if (watching_targets)
      deadline = std::min(deadline, last_target_check_ns + kTargetCheckIntervalNs);
    const int timeout_ms = now >= deadline ? 0 : static_cast<int>((deadline - now) / 1000000 + 1);
    const int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) return Fail(fmt::format("poll: {}", strerror(errno)));
    bool hangup = false;
    for (size_t i = 1; i < fds.size(); ++i) {
      // An event whose task is gone reports POLLHUP forever; stop polling it
      // (its buffer is still drained below and at the end).
      if (fds[i].revents & (POLLHUP | POLLERR)) {
        fds[i].fd = -1;
        hangup = true;
      }
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info;
      while (read(signal_fd_.get(), &info, sizeof(info)) == sizeof(info)) {
        if (info.ssi_signo != SIGCHLD) cause.stop_signal = static_cast<int>(info.ssi_signo);
      }
      if (child_ > 0 && waitpid(child_, &cause.child_status, WNOHANG) == child_) {
        cause.child_done = true;
      }
    }
    now = MonotonicNowNs();
    if (watching_targets && (hangup || now >= last_target_check_ns + kTargetCheckIntervalNs)) {
      last_target_check_ns = now;
      if (TargetsGone(target_)) cause.child_done = true;
    }
    drainer_->DrainAll();
    if (drainer_->chunk_full() || now >= last_flush_ns + kChunkMaxAgeNs) {
      // When the writer holds its lock, try again in a millisecond (not at
      // once: the deadline has passed, and polling with no wait would spin
      // against the writer we wait for).
      last_flush_ns = drainer_->Flush(/*wait=*/false) ? now : now - kChunkMaxAgeNs + kFlushRetryNs;
    }
    ShowStatus(now);
  }
  return cause;
}

// Stops counting, then takes what is left in every buffer.
void Recorder::StopAndDrain() {
  for (PerfEvent& event : opener_->events()) (void)event.Disable();
  drainer_->DrainAll();
  drainer_->Flush(/*wait=*/true);
}

// Waits for the command to end and returns its exit status, shell-style
// (0 without a command). Stopped by a signal or --duration, the command is
// sent the signal (a terminal's SIGINT reached it already) or SIGTERM.
int Recorder::EndCommand(const StopCause& cause) {
  if (child_ <= 0) return 0;
  int status = cause.child_status;
  if (!cause.child_done) {
    if (cause.stop_signal != SIGINT)
      kill(child_, cause.stop_signal != 0 ? cause.stop_signal : SIGTERM);
    waitpid(child_, &status, 0);
  }
  child_ = -1;
  return ShellStatus(status);
}

// The one way out after a failure: the command is killed (it must not run
// on unobserved, or wait forever for its release), and the output is
// finished if recording had started (what was recorded stays readable) or
// removed if not.
Result<RecordSummary> Recorder::Abandon(Error error) {
  if (child_ > 0) {
    kill(child_, SIGKILL);
    waitpid(child_, nullptr, 0);
    child_ = -1;
  }
  if (started_ && drainer_) {
    StopAndDrain();
    if (Finish(/*exit_status=*/1)) {
      error.message += fmt::format(" ({} keeps what was recorded until then)", options_.output);
      return tl::unexpected(std::move(error));
    }
  }
  if (writer_) {
    writer_.reset();
    unlink(options_.output.c_str());
  }
  return tl::unexpected(std::move(error));
}

Result<RecordSummary> Recorder::Finish(int exit_status) {
  const double seconds = (MonotonicNowNs() - start_ns_) / 1e9;
  std::string vdso_note;
  std::vector<std::byte> vdso = facts_.VdsoPayload(&vdso_note);
  writer_->Submit(format::ChunkType::kBuildIds, facts_.BuildIdPayload(vdso), facts_.binary_count());
  if (!vdso.empty()) writer_->Submit(format::ChunkType::kVdso, std::move(vdso));
  std::string kernel_note;
  auto kernel_symbols = facts_.KernelSymbolsPayload(DefaultKallsymsSnapshotOptions(), &kernel_note);
  if (!kernel_symbols.empty()) {
    writer_->Submit(format::ChunkType::kKernelSymbols, std::move(kernel_symbols));
  }
  // How much each event counted and ran: the report tells multiplexing
  // from it. A failed read costs only this chunk, never the recording.
  if (auto counts = opener_->ReadCounts(MonotonicNowNs() - start_ns_)) {
    writer_->Submit(format::ChunkType::kCounts, format::EncodeCounts(*counts));
  } else if (!options_.quiet) {
    fmt::print(stderr, "sample-record: note: final counts not stored: {}\n",
               counts.error().message);
  }
  format::Trailer trailer = MakeTrailer(drainer_->counters());
  trailer.header.record_count = drainer_->records_written();
  if (auto range = drainer_->time_range()) {
    trailer.header.start_clock_ns = range->first;
    trailer.header.end_clock_ns = range->second;
  }
  if (auto finished = writer_->Finish(trailer); !finished) {
    return Fail(fmt::format("{}: {}", options_.output, finished.error().message));
  }
  opener_.reset();  // closes the events

  RecordSummary summary;
  summary.samples = trailer.header.sample_count;
  summary.lost_samples = trailer.header.lost_samples;
  summary.bytes_written = writer_->bytes_written();
  summary.raw_bytes = writer_->raw_bytes();  // complete once Finish has written everything
  summary.seconds = seconds;
  summary.exit_status = exit_status;
  if (status_line_) fmt::print(stderr, "\r\033[K");
  if (!options_.quiet) {
    if (!kernel_note.empty()) fmt::print(stderr, "sample-record: note: {}\n", kernel_note);
    if (!vdso_note.empty()) fmt::print(stderr, "sample-record: note: {}\n", vdso_note);
    PrintSummary(summary, drainer_->counters(), target_.cpus, options_);
  }
  return summary;
}

}  // namespace

Result<void> MoveOldOutput(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return {};
  const std::string old = path + ".old";
  if (rename(path.c_str(), old.c_str()) != 0) {
    return Fail(fmt::format("cannot rename {} to {}: {}", path, old, strerror(errno)));
  }
  return {};
}

Result<RecordSummary> RunRecording(const RecordOptions& options) {
  Recorder recorder(options);
  return recorder.Run();
}

}  // namespace sample::record
