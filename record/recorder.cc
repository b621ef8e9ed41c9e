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
#include "libsample/regular_file.h"
#include "libsample/unique_fd.h"
#include "record/command_launcher.h"
#include "record/events/event_opener.h"
#include "record/drain/flight_history.h"
#include "record/facts/host_facts.h"
#include "record/events/max_stack_raise.h"
#include "record/events/off_cpu_spec.h"
#include "record/facts/postmortem_facts.h"
#include "record/facts/proc_synthesis.h"
#include "record/record_summary.h"
#include "record/drain/ring_drainer.h"
#include "record/events/ring_size.h"
#include "record/control/sampling_control.h"

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

// How a recording ended: the command's wait status (when there is a
// command and it ended), the stop signal that arrived, if any.
struct StopCause {
  bool child_done = false;
  int child_status = 0;
  int stop_signal = 0;
  // The file writer failed (a full disk): recording more would only drop
  // it, so the recording ends as --duration ends it, and Finish says why.
  bool write_failed = false;
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
  // A chunk written once at the start (events, metadata) or as it happens
  // (control switches): to the file, or kept for every flight snapshot.
  void Keep(format::ChunkType type, std::vector<std::byte> payload, uint64_t count = 0);
  // The chunks every file ends with (build-ids, vDSO, kernel symbols,
  // counts) and the trailer; closes `writer`.
  Result<void> WriteClosing(format::SampleFileWriter& writer, const format::Trailer& trailer,
                            std::string* kernel_note, std::string* vdso_note);
  // --flight-recorder: writes the history to `path`, a complete file.
  struct FlightFile {
    format::Trailer trailer;
    uint64_t bytes_written = 0;
    uint64_t raw_bytes = 0;
  };
  Result<FlightFile> WriteFlightFile(const std::string& path, std::string* kernel_note,
                                     std::string* vdso_note);
  // A snapshot while recording, to FILE.<local time>; says its name.
  Result<void> Snapshot();

  const RecordOptions& options_;
  // --raise-max-stack: set back when the recorder ends (or by its
  // guardian). Declared first so that it goes last, after the events and
  // their ring buffers: the kernel refuses the change while they exist.
  std::optional<RaisedMaxStack> raised_max_stack_;
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
  std::optional<SamplingControl> control_;

  struct KeptChunk {
    format::ChunkType type;
    std::vector<std::byte> payload;
    uint64_t count;
  };
  std::optional<FlightHistory> flight_;  // --flight-recorder
  std::vector<KeptChunk> kept_;         // --flight-recorder: what Keep was given
  uint64_t snapshots_ = 0;
};

void Recorder::Keep(format::ChunkType type, std::vector<std::byte> payload, uint64_t count) {
  if (options_.flight_seconds > 0) {
    kept_.push_back({type, std::move(payload), count});
  } else {
    writer_->Submit(type, std::move(payload), count);
  }
}

Result<void> Recorder::OpenEvents() {
  SamplingDefaults defaults;
  defaults.frequency = options_.frequency;
  defaults.period = options_.period;
  defaults.chain_capture = options_.chain_capture;
  defaults.max_stack = options_.max_stack;
  if (options_.max_stack != 0) {
    // The kernel refuses a deeper chain than its limit with EOVERFLOW,
    // which says nothing of the limit: say it here.
    const std::optional<int> limit = ReadPerfEventMaxStack();
    if (limit && options_.max_stack > static_cast<uint32_t>(*limit)) {
      if (!options_.raise_max_stack) {
        return Fail(fmt::format(
            "--max-stack {} is above the kernel's limit, kernel.perf_event_max_stack = {}: add "
            "--raise-max-stack (root or CAP_SYS_ADMIN; set back when the recording ends), "
            "raise it yourself (sysctl kernel.perf_event_max_stack={}) or use --max-stack {}",
            options_.max_stack, *limit, options_.max_stack, *limit));
      }
      TRY_ASSIGN(auto raised, RaisedMaxStack::Raise(static_cast<int>(options_.max_stack)));
      if (!options_.quiet) {
        fmt::print(stderr,
                   "sample-record: kernel.perf_event_max_stack raised from {} to {} for this "
                   "recording\n",
                   raised.old_value(), options_.max_stack);
      }
      raised_max_stack_.emplace(std::move(raised));
    }
  }
  defaults.delayed = options_.delay_ms != 0 || options_.start_disabled;
  defaults.separate_tracking = !options_.control.empty();
  // Off-CPU time ends at the switch-in record.
  defaults.switch_events = options_.switch_events || options_.off_cpu;
  defaults.mmap_pages = options_.mmap_pages;
  EventParseOptions parse;
  const auto paranoid = ReadPerfEventParanoid();
  parse.exclude_kernel_default = KernelExcludedByParanoia(paranoid);
  const bool default_event = options_.events.empty();
  std::string list = default_event ? "cycles" : "";
  for (const std::string& e : options_.events) list += (list.empty() ? "" : ",") + e;

  std::optional<EventSpec> off_cpu;
  if (options_.off_cpu) {
    auto parsed = OffCpuSpec(parse);
    if (!parsed) return Fail("--off-cpu: " + parsed.error().message, parsed.error().sys_errno);
    off_cpu = std::move(*parsed);
  }
  auto open = [&](const std::string& text) -> Result<void> {
    TRY_ASSIGN(auto specs, ParseEventList(text, parse));
    TRY(AttachFilters(options_.events, options_.filters, &specs));
    if (off_cpu) specs.push_back(*off_cpu);
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
  const size_t pages = opener_->mmap_pages();
  if (!options_.quiet && options_.mmap_pages == 0 && pages != kDefaultRingPages) {
    fmt::print(stderr,
               "sample-record: ring buffers of {} per CPU (-m {}) for {} of stack copies a "
               "second per CPU; -m sets another size.\n",
               HumanBytes(pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE))), pages,
               HumanBytes(StackCopyBytesPerSecond(opener_->attrs())));
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
  const bool sampling = options_.delay_ms == 0 && !options_.start_disabled;
  auto enabled = sampling ? opener_->EnableAll() : opener_->EnableTracking();
  if (!enabled) return enabled;
  if (sampling) control_->Switched(/*on=*/true, now);
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
  if (flight_) {
    flight_->AddSideband(chunk);
  } else {
    writer_->SubmitRecords(std::move(chunk));
  }
  drainer_->CountWritten(counts.threads + counts.mappings);
  return {};
}

// -D: the delay is over.
Result<void> Recorder::StartSampling() {
  const uint64_t now = MonotonicNowNs();
  TRY(opener_->EnableAll());
  control_->Switched(/*on=*/true, now);
  return {};
}

void Recorder::ShowStatus(uint64_t now) {
  if (!status_line_ || now - last_status_ns_ < kStatusIntervalNs) return;
  last_status_ns_ = now;
  uint64_t samples = 0, lost = 0;
  for (const CpuCounters& c : drainer_->counters()) {
    samples += c.samples;
    lost += c.lost_samples + c.dropped_samples;
  }
  const std::string kept =
      flight_ ? fmt::format("{} in memory",
                            HumanBytes(flight_->chunk_bytes() + flight_->sideband_bytes()))
              : fmt::format("{} written", HumanBytes(writer_->bytes_written()));
  fmt::print(stderr, "\r[ recording: {:.1f} s, {} samples, {} lost, {} ]\033[K",
             (now - start_ns_) / 1e9, samples, lost, kept);
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
  // Refused before anything runs (the flight recorder and --stat write it
  // only at the end, when a refusal would lose the whole run).
  TRY(CheckReplaceable(options_.output, "-o"));
  TRY_ASSIGN(auto target, ResolveTarget(options_.target));
  target_ = std::move(target);
  status_line_ = !options_.quiet && isatty(STDERR_FILENO);

  // Stop signals and SIGCHLD arrive through a signalfd polled with the
  // ring buffers; a command gets the original mask back before exec.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&stop_signals, sig);
  if (options_.flight_seconds > 0) sigaddset(&stop_signals, SIGUSR2);  // a snapshot
  sigprocmask(SIG_BLOCK, &stop_signals, &original_mask_);
  signal_fd_ = UniqueFd(signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signal_fd_.valid()) return Fail(fmt::format("signalfd: {}", strerror(errno)));

  // The flight recorder writes nothing until a snapshot or the end.
  if (options_.flight_seconds == 0) {
    TRY(MoveOldOutput(options_.output));
    format::WriterOptions writer_options;
    writer_options.zstd_level = options_.zstd_level;
    TRY_ASSIGN(auto writer, format::SampleFileWriter::Create(options_.output, writer_options));
    writer_ = std::move(writer);
  }

  if (target_.kind == TargetKind::kCommand) {
    TRY_ASSIGN(auto launcher, CommandLauncher::Start(options_.target.command, original_mask_));
    child_ = launcher.pid();
    launcher_.emplace(std::move(launcher));
    target_.threads = {child_};
  }

  if (auto opened = OpenEvents(); !opened) return opened;
  Keep(format::ChunkType::kEvents, format::EncodeEvents(opener_->DescribeFile()));
  if (const auto toggles = ToggleEntries(opener_->specs()); !toggles.empty()) {
    Keep(format::ChunkType::kToggles, format::EncodeToggles(toggles));
  }
  // The tracepoints' formats, so the report names their payloads' fields
  // on any host (tracefs formats change between kernels).
  std::vector<format::TraceFormatEntry> trace_formats;
  for (size_t i = 0; i < opener_->specs().size(); ++i) {
    const EventSpec& spec = opener_->specs()[i];
    if (spec.attr.type != PERF_TYPE_TRACEPOINT) continue;
    trace_formats.push_back(
        {static_cast<uint32_t>(i), spec.attr.config, spec.trace_format, spec.filter});
  }
  if (!trace_formats.empty()) {
    Keep(format::ChunkType::kTraceFormats, format::EncodeTraceFormats(trace_formats));
  }
  Keep(format::ChunkType::kMetadata, format::EncodeMetadata(CollectHostFacts(options_.invocation)));
  drainer_.emplace(*opener_, target_.cpus, writer_.get(), facts_);
  if (options_.flight_seconds > 0) {
    flight_.emplace(static_cast<uint64_t>(options_.flight_seconds * 1e9),
                    FlightByteCap(options_.flight_seconds), opener_->first_attr(),
                    opener_->cpu_field());
    drainer_->DivertTo(
        [this](format::RecordsChunk chunk) { return flight_->Add(std::move(chunk)); });
  }
  const bool delayed = options_.delay_ms != 0 || options_.start_disabled;
  auto sink = [this](format::ChunkType type, std::vector<std::byte> payload, uint64_t count) {
    Keep(type, std::move(payload), count);
  };
  TRY_ASSIGN(auto control, SamplingControl::Create(*opener_, sink, options_.control, delayed,
                                                   status_line_, flight_.has_value()));
  control_.emplace(std::move(control));
  return {};
}

Result<StopCause> Recorder::Record() {
  start_ns_ = MonotonicNowNs();
  // -D -1 waits for --control's enable; --duration counts from the start.
  const uint64_t enable_at =
      options_.start_disabled ? start_ns_ : start_ns_ + options_.delay_ms * 1000000;
  // Enabled before the command is let go: its task events wait for the
  // exec anyway (enable_on_exec), but a probe opened on every CPU
  // (OpenedOnEveryCpu) is on only from here, and a short command released
  // first ran through every hit before it was.
  TRY(Start());
  if (launcher_) {
    TRY(launcher_->Release());  // a command that cannot run leaves no file
  }
  started_ = true;
  bool sampling = options_.delay_ms == 0 || options_.start_disabled;  // no timer pending
  const uint64_t stop_at =
      options_.duration_s > 0 ? enable_at + static_cast<uint64_t>(options_.duration_s * 1e9) : 0;

  std::vector<pollfd> fds;
  fds.push_back({signal_fd_.get(), POLLIN, 0});
  // The control FIFO, when there is one, comes next; then the events.
  if (control_->fd() >= 0) fds.push_back({control_->fd(), POLLIN, 0});
  const size_t first_event = fds.size();
  for (size_t owner : opener_->ring_owners()) {
    fds.push_back({opener_->events()[owner].fd(), POLLIN, 0});
  }

  StopCause cause;
  uint64_t last_flush_ns = start_ns_;
  uint64_t last_target_check_ns = 0;
  const bool watching_targets =
      target_.kind == TargetKind::kProcesses || target_.kind == TargetKind::kThreads;
  RequestShortSlice();
  bool stop_commanded = false;
  uint64_t max_age = kFirstChunkMaxAgeNs;  // kChunkMaxAgeNs after the first records
  while (!cause.child_done && cause.stop_signal == 0 && !stop_commanded && !cause.write_failed) {
    uint64_t now = MonotonicNowNs();
    sampling |= control_->commanded();  // a command overrides the -D timer
    if (!sampling && now >= enable_at) {
      TRY(StartSampling());
      sampling = true;
    }
    if (stop_at != 0 && now >= stop_at) break;
    uint64_t deadline = last_flush_ns + max_age;
    if (!sampling) deadline = std::min(deadline, enable_at);
    if (stop_at != 0) deadline = std::min(deadline, stop_at);
    if (watching_targets)
      deadline = std::min(deadline, last_target_check_ns + kTargetCheckIntervalNs);
    const int timeout_ms = now >= deadline ? 0 : static_cast<int>((deadline - now) / 1000000 + 1);
    const int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) return Fail(fmt::format("poll: {}", strerror(errno)));
    bool hangup = false;
    bool snapshot_signal = false;
    if (first_event > 1 && (fds[1].revents & POLLIN)) {
      TRY_ASSIGN(stop_commanded, control_->RunCommands());
    }
    for (size_t i = first_event; i < fds.size(); ++i) {
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
        if (info.ssi_signo == SIGUSR2) {
          snapshot_signal = true;
        } else if (info.ssi_signo != SIGCHLD) {
          cause.stop_signal = static_cast<int>(info.ssi_signo);
        }
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
    if (drainer_->chunk_full() || now >= last_flush_ns + max_age) {
      // When the writer holds its lock, try again in a millisecond (not at
      // once: the deadline has passed, and polling with no wait would spin
      // against the writer we wait for).
      const bool had_records = !drainer_->chunk_empty();
      if (drainer_->Flush(/*wait=*/false)) {
        last_flush_ns = now;
        if (had_records) max_age = kChunkMaxAgeNs;
      } else {
        last_flush_ns = now - max_age + kFlushRetryNs;
      }
      if (writer_ && writer_->failed()) cause.write_failed = true;
    }
    const bool snapshot_command = control_->TakeSnapshotRequest();
    if (flight_ && (snapshot_signal || snapshot_command)) {
      // A failed snapshot is said and answered; recording goes on.
      auto written = Snapshot();
      if (!written) fmt::print(stderr, "sample-record: snapshot: {}\n", written.error().message);
      if (snapshot_command) control_->AnswerSnapshot(written.has_value());
      last_flush_ns = MonotonicNowNs();
    }
    ShowStatus(now);
  }
  return cause;
}

// Stops counting, then takes what is left in every buffer.
void Recorder::StopAndDrain() {
  for (PerfEvent& event : opener_->events()) (void)event.Disable();
  if (control_) control_->Switched(/*on=*/false, MonotonicNowNs());
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

Result<void> Recorder::WriteClosing(format::SampleFileWriter& writer,
                                    const format::Trailer& trailer, std::string* kernel_note,
                                    std::string* vdso_note) {
  std::vector<std::byte> vdso = facts_.VdsoPayload(vdso_note);
  writer.Submit(format::ChunkType::kBuildIds, facts_.BuildIdPayload(vdso), facts_.binary_count());
  if (!vdso.empty()) writer.Submit(format::ChunkType::kVdso, std::move(vdso));
  auto kernel_symbols = facts_.KernelSymbolsPayload(DefaultKallsymsSnapshotOptions(), kernel_note);
  if (!kernel_symbols.empty()) {
    writer.Submit(format::ChunkType::kKernelSymbols, std::move(kernel_symbols));
  }
  // How much each event counted and ran: the report tells multiplexing
  // from it. A failed read costs only this chunk, never the recording.
  if (auto counts = opener_->ReadCounts(MonotonicNowNs() - start_ns_)) {
    writer.Submit(format::ChunkType::kCounts, format::EncodeCounts(*counts));
  } else if (!options_.quiet) {
    fmt::print(stderr, "sample-record: note: final counts not stored: {}\n",
               counts.error().message);
  }
  return writer.Finish(trailer);
}

Result<Recorder::FlightFile> Recorder::WriteFlightFile(const std::string& path,
                                                       std::string* kernel_note,
                                                       std::string* vdso_note) {
  format::WriterOptions writer_options;
  writer_options.zstd_level = options_.zstd_level;
  TRY_ASSIGN(auto writer, format::SampleFileWriter::Create(path, writer_options));
  // The same chunks as a recording written as it goes: the first ones,
  // the sideband kept from before the history, the history, the closing ones.
  for (const KeptChunk& chunk : kept_) writer->Submit(chunk.type, chunk.payload, chunk.count);
  FlightFile file;
  file.trailer = MakeTrailer(flight_->Count(target_.cpus));
  uint64_t records = 0, first = UINT64_MAX, last = 0;
  if (!flight_->sideband().records.empty()) {
    format::RecordsChunk sideband = flight_->sideband();
    if (sideband.time_min == UINT64_MAX) sideband.time_min = 0;
    records += sideband.record_count;
    writer->SubmitRecords(std::move(sideband));
  }
  for (const format::RecordsChunk& chunk : flight_->chunks()) {
    records += chunk.record_count;
    if (chunk.time_min != 0) first = std::min(first, chunk.time_min);
    last = std::max(last, chunk.time_max);
    writer->SubmitRecords(chunk);  // a copy: the history stays for the next snapshot
  }
  file.trailer.header.record_count = records;
  if (first != UINT64_MAX) {
    file.trailer.header.start_clock_ns = first;
    file.trailer.header.end_clock_ns = last;
  }
  if (auto closed = WriteClosing(*writer, file.trailer, kernel_note, vdso_note); !closed) {
    return Fail(fmt::format("{}: {}", path, closed.error().message));
  }
  file.bytes_written = writer->bytes_written();
  file.raw_bytes = writer->raw_bytes();
  return file;
}

// FILE.20261124-061502.123 (local time, milliseconds); .N after it when
// two snapshots fall in the same millisecond.
std::string SnapshotPath(const std::string& output) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
  const std::string base = fmt::format("{}.{}.{:03}", output, stamp, now.tv_nsec / 1000000);
  std::string path = base;
  struct stat st {};
  for (int n = 1; lstat(path.c_str(), &st) == 0; ++n) path = fmt::format("{}.{}", base, n);
  return path;
}

Result<void> Recorder::Snapshot() {
  drainer_->Flush(/*wait=*/true);  // the history ends now
  const std::string path = SnapshotPath(options_.output);
  std::string kernel_note, vdso_note;
  TRY_ASSIGN(auto file, WriteFlightFile(path, &kernel_note, &vdso_note));
  ++snapshots_;
  if (!options_.quiet) {
    if (status_line_) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "sample-record: snapshot: {} ({} samples, {})\n", path,
               file.trailer.header.sample_count, HumanBytes(file.bytes_written));
  }
  return {};
}

Result<RecordSummary> Recorder::Finish(int exit_status) {
  const double seconds = (MonotonicNowNs() - start_ns_) / 1e9;
  std::string vdso_note, kernel_note;
  RecordSummary summary;
  format::Trailer trailer;
  if (flight_) {
    // The end's snapshot is the output file itself.
    TRY(MoveOldOutput(options_.output));
    TRY_ASSIGN(auto file, WriteFlightFile(options_.output, &kernel_note, &vdso_note));
    trailer = file.trailer;
    summary.bytes_written = file.bytes_written;
    summary.raw_bytes = file.raw_bytes;
  } else {
    trailer = MakeTrailer(drainer_->counters());
    trailer.header.record_count = drainer_->records_written();
    if (auto range = drainer_->time_range()) {
      trailer.header.start_clock_ns = range->first;
      trailer.header.end_clock_ns = range->second;
    }
    if (auto finished = WriteClosing(*writer_, trailer, &kernel_note, &vdso_note); !finished) {
      // The recording stopped at the failed write (Record); the chunks
      // written before it are whole, and the reader recovers them.
      return Fail(fmt::format("{}: {}; recording stopped after {:.2f} s, {} written before the "
                              "failure stay readable (not finalized)",
                              options_.output, finished.error().message, seconds,
                              HumanBytes(writer_->bytes_written())));
    }
    summary.bytes_written = writer_->bytes_written();
    summary.raw_bytes = writer_->raw_bytes();  // complete once Finish has written everything
  }
  opener_.reset();  // closes the events

  summary.samples = trailer.header.sample_count;
  summary.lost_samples = trailer.header.lost_samples;
  summary.seconds = seconds;
  summary.mmap_pages = opener_->mmap_pages();
  summary.exit_status = exit_status;
  if (status_line_) fmt::print(stderr, "\r\033[K");
  if (!options_.quiet) {
    if (!kernel_note.empty()) fmt::print(stderr, "sample-record: note: {}\n", kernel_note);
    if (!vdso_note.empty()) fmt::print(stderr, "sample-record: note: {}\n", vdso_note);
    if (flight_) {
      // What the history cost: the one number a user sizing --flight-recorder needs.
      fmt::print(stderr,
                 "sample-record: flight recorder: kept the last {} s in {} of memory (sideband "
                 "{}, cap {}); {} snapshot(s) written before the end\n",
                 options_.flight_seconds, HumanBytes(flight_->chunk_bytes()),
                 HumanBytes(flight_->sideband_bytes()), HumanBytes(flight_->byte_cap()),
                 snapshots_);
      if (flight_->capped_chunks() > 0) {
        fmt::print(stderr,
                   "sample-record: warning: the memory cap dropped {} chunk(s) younger than the "
                   "window: snapshots hold less than {} s (use a shorter window or a lower -F)\n",
                   flight_->capped_chunks(), options_.flight_seconds);
      }
    }
    PrintSummary(summary, drainer_->counters(), target_.cpus, options_);
  }
  return summary;
}

}  // namespace

Result<void> MoveOldOutput(const std::string& path) {
  // Only a regular file (or a link that is not a trap) is moved: as root,
  // `-o /dev/null` renamed the real /dev/null away.
  TRY(CheckReplaceable(path, "-o"));
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
