#include "record/record_session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
#include "libsample/capabilities.h"
#include "libsample/event_spec.h"
#include "libsample/perf_event.h"
#include "libsample/perf_event_advice.h"
#include "libsample/perf_record.h"
#include "libsample/record_walker.h"
#include "libsample/unique_fd.h"
#include "record/command_launcher.h"
#include "record/event_opener.h"
#include "record/host_facts.h"
#include "record/postmortem_facts.h"
#include "record/proc_synthesis.h"
#include "record/record_summary.h"

namespace sample::record {
namespace {

// A chunk goes to the writer when it reaches this size or this age, so a
// killed recorder loses at most the last half second.
constexpr size_t kChunkBytes = 4 << 20;
constexpr uint64_t kChunkMaxAgeNs = 500'000'000;
constexpr uint64_t kStatusIntervalNs = 500'000'000;
constexpr uint64_t kFlushRetryNs = 1'000'000;
// How often -p/-t targets are checked for having exited (a /proc read per
// target): each wakeup would cost a file open per target.
constexpr uint64_t kTargetCheckIntervalNs = 100'000'000;

// The draining thread asks the scheduler for the shortest time slice
// (EEVDF, Linux 6.6+: sched_attr.sched_runtime of a SCHED_OTHER thread is
// its slice, clamped to 0.1-100 ms, and since 6.12 a shorter slice lets a
// waking thread preempt the running one). A ring-buffer wakeup then runs
// the drain at once instead of after the busy target's slice, which is
// what small buffers (-m 8: ~6 ms of samples at 50 kHz) need to lose
// nothing. Unprivileged; policy and nice stay as they were; threads
// started earlier (the writer) and later (none) keep the default. Older
// kernels reject or ignore it, which changes nothing.
void RequestShortSlice() {
  struct SchedAttr {  // struct sched_attr, SCHED_ATTR_SIZE_VER0
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
  };
  SchedAttr attr{};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0) return;
  if (attr.sched_policy != SCHED_OTHER) return;  // leave batch, idle, RT alone
  attr.size = sizeof(attr);
  attr.sched_flags = 0x01;  // SCHED_FLAG_RESET_ON_FORK
  attr.sched_runtime = 100'000;
  (void)syscall(SYS_sched_setattr, 0, &attr, 0);
}

class Recorder {
 public:
  explicit Recorder(const RecordOptions& options) : options_(options) {}
  Result<RecordSummary> Run();

 private:
  Result<void> OpenEvents();
  Result<void> Start();
  Result<void> StartSampling();
  void DrainAll();
  void Account(size_t cpu_index, std::span<const std::byte> bytes);
  bool FlushChunk(bool wait);
  bool TargetsGone() const;
  void ShowStatus(uint64_t now);
  Result<RecordSummary> Finish(int child_status);

  const RecordOptions& options_;
  RecordTarget target_;
  std::optional<EventOpener> opener_;
  EventTable table_;        // to parse records by the event that wrote them
  perf_event_attr attr_{};  // the first event's: time and trailer layout are common to all
  std::vector<CpuCounters> counters_;
  std::unique_ptr<format::SampleFileWriter> writer_;
  std::optional<CommandLauncher> launcher_;
  PostmortemFacts facts_;
  bool status_line_ = false;
  uint64_t start_ns_ = 0;
  uint64_t last_status_ns_ = 0;

  std::vector<std::byte> chunk_;
  std::vector<format::CpuRun> chunk_cpus_;  // whose ring each part of chunk_ came from
  size_t chunk_capacity_ = 0;
  uint64_t chunk_records_ = 0;
  uint64_t chunk_time_min_ = UINT64_MAX;
  uint64_t chunk_time_max_ = 0;
  uint64_t total_records_ = 0;
  uint32_t sample_time_offset_ = 0;  // for the writer's time deltas; 0: none
  uint64_t first_time_ = UINT64_MAX;
  uint64_t last_time_ = 0;
};

Result<void> Recorder::OpenEvents() {
  SamplingDefaults defaults;
  defaults.frequency = options_.frequency;
  defaults.period = options_.period;
  defaults.call_graph = options_.call_graph;
  defaults.delayed = options_.delay_ms != 0;
  defaults.switch_events = options_.switch_events;
  defaults.mmap_pages = options_.mmap_pages;
  EventParseOptions parse;
  const auto paranoid = ReadPerfEventParanoid();
  // The kernel's own test (perf_allow_kernel): paranoid above 1 and neither
  // CAP_PERFMON nor CAP_SYS_ADMIN in effect, whoever the user is.
  if (paranoid && *paranoid >= 2 && !PerfmonCapable()) {
    parse.exclude_kernel_default = true;
    if (!options_.quiet) {
      fmt::print(stderr,
                 "sample-record: kernel.perf_event_paranoid is {}: recording user space only "
                 "(sysctl kernel.perf_event_paranoid=1 or CAP_PERFMON to include the kernel).\n",
                 *paranoid);
    }
  }
  const bool default_event = options_.events.empty();
  std::string list = default_event ? "cycles" : "";
  for (const std::string& e : options_.events) list += (list.empty() ? "" : ",") + e;

  auto open = [&](const std::string& text) -> Result<void> {
    auto specs = ParseEventList(text, parse);
    if (!specs) return tl::unexpected(specs.error());
    auto opener = EventOpener::Create(std::move(*specs), defaults, target_);
    if (!opener) return tl::unexpected(opener.error());
    opener_.emplace(std::move(*opener));
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
  attr_ = opener_->first_attr();
  table_ = EventTable(opener_->Describe());
  // Sample times are stored as deltas only where every event puts them at
  // the same place (the writer rewrites them without looking events up).
  sample_time_offset_ = SampleTimeOffset(attr_);
  for (const EventDesc& e : table_.events()) {
    if (SampleTimeOffset(e.attr) != sample_time_offset_) sample_time_offset_ = 0;
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
  if (target_.kind == TargetKind::kCommand) return {};
  std::vector<std::byte> synthesized;
  ProcSynthesizer synthesizer(attr_, opener_->events().front().id(), now);
  if (target_.synthesize_all) {
    synthesizer.AddAllProcesses(synthesized);
  } else {
    for (pid_t pid : target_.processes) synthesizer.AddProcess(pid, synthesized);
  }
  const auto counts = synthesizer.counts();
  ForEachRecord(synthesized, [&](const perf_event_header& h, std::span<const std::byte> r) {
    facts_.Observe(h, r, attr_);
  });
  format::RecordsChunk chunk;
  chunk.record_count = counts.threads + counts.mappings;
  chunk.time_min = chunk.time_max = now;
  chunk.cpu_field = opener_->cpu_field();
  chunk.cpu_runs.push_back({synthesized.size(), 0});  // CPU 0, as perf's synthesized records
  chunk.records = std::move(synthesized);
  writer_->SubmitRecords(std::move(chunk));
  total_records_ += counts.threads + counts.mappings;
  return {};
}

// -D: the delay is over.
Result<void> Recorder::StartSampling() { return opener_->EnableAll(); }

void Recorder::Account(size_t cpu_index, std::span<const std::byte> bytes) {
  CpuCounters& c = counters_[cpu_index];
  ForEachRecord(bytes, [&](const perf_event_header& header, std::span<const std::byte> record) {
    ++chunk_records_;
    const uint64_t time = RecordTime(record, attr_);
    if (time != 0) {
      chunk_time_min_ = std::min(chunk_time_min_, time);
      chunk_time_max_ = std::max(chunk_time_max_, time);
    }
    switch (header.type) {
      case PERF_RECORD_SAMPLE:
        ++c.samples;
        // Only kernel-mode samples hold kernel addresses worth noting; the
        // event lookup (layouts differ between events) is paid only for them.
        if ((header.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
          if (auto event = table_.EventIndexFor(record)) {
            facts_.Observe(header, record, table_.events()[*event].attr);
          }
        }
        break;
      case PERF_RECORD_MMAP2:
        facts_.Observe(header, record, attr_);
        break;
      case PERF_RECORD_LOST:
        if (auto lost = ParseLost(record, attr_)) {
          c.lost_samples += lost->lost;
          ++c.lost_records;
        }
        break;
      case PERF_RECORD_LOST_SAMPLES:
        if (auto lost = ParseLostSamples(record, attr_)) c.dropped_samples += lost->lost;
        break;
      case PERF_RECORD_THROTTLE:
        ++c.throttles;
        break;
      default:
        break;
    }
  });
}

void Recorder::DrainAll() {
  auto& events = opener_->events();
  const auto& owners = opener_->ring_owners();
  for (size_t cpu = 0; cpu < owners.size(); ++cpu) {
    const size_t before = chunk_.size();
    if (events[owners[cpu]].ring().Drain(chunk_) != 0) {
      Account(cpu, std::span<const std::byte>(chunk_).subspan(before));
      const auto ring_cpu = static_cast<uint32_t>(target_.cpus[cpu]);
      if (!chunk_cpus_.empty() && chunk_cpus_.back().cpu == ring_cpu) {
        chunk_cpus_.back().end = chunk_.size();
      } else {
        chunk_cpus_.push_back({chunk_.size(), ring_cpu});
      }
    }
  }
}

// Hands the chunk to the writer. While recording (`wait` false) this never
// blocks: if the writer thread holds its lock, the chunk grows until the
// next try.
bool Recorder::FlushChunk(bool wait) {
  if (chunk_.empty()) return true;
  format::RecordsChunk chunk;
  chunk.record_count = chunk_records_;
  chunk.time_min = chunk_time_min_ == UINT64_MAX ? 0 : chunk_time_min_;
  chunk.time_max = chunk_time_max_;
  chunk.sample_time_offset = sample_time_offset_;
  chunk.cpu_field = opener_->cpu_field();
  chunk.cpu_runs = std::move(chunk_cpus_);  // the writer ignores them without cpu_field
  chunk.records = std::move(chunk_);
  if (wait) {
    writer_->SubmitRecords(std::move(chunk));
  } else if (!writer_->TrySubmitRecords(chunk)) {
    chunk_ = std::move(chunk.records);
    chunk_cpus_ = std::move(chunk.cpu_runs);
    return false;
  }
  chunk_cpus_.clear();
  total_records_ += chunk_records_;
  if (chunk_time_min_ != UINT64_MAX) {
    first_time_ = std::min(first_time_, chunk_time_min_);
    last_time_ = std::max(last_time_, chunk_time_max_);
  }
  chunk_ = writer_->TakeSpareBuffer();
  chunk_.reserve(chunk_capacity_);
  chunk_records_ = 0;
  chunk_time_min_ = UINT64_MAX;
  chunk_time_max_ = 0;
  return true;
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

bool Recorder::TargetsGone() const {
  if (target_.kind != TargetKind::kProcesses && target_.kind != TargetKind::kThreads) return false;
  for (pid_t pid : target_.kind == TargetKind::kProcesses ? target_.processes : target_.threads) {
    if (!TaskGone(pid)) return false;
  }
  return true;
}

void Recorder::ShowStatus(uint64_t now) {
  if (!status_line_ || now - last_status_ns_ < kStatusIntervalNs) return;
  last_status_ns_ = now;
  uint64_t samples = 0, lost = 0;
  for (const CpuCounters& c : counters_) {
    samples += c.samples;
    lost += c.lost_samples + c.dropped_samples;
  }
  fmt::print(stderr, "\r[ recording: {:.1f} s, {} samples, {} lost, {} written ]\033[K",
             (now - start_ns_) / 1e9, samples, lost, HumanBytes(writer_->bytes_written()));
  std::fflush(stderr);
}

// Moves an existing output aside as FILE.old, as perf does.
Result<void> MoveOldOutput(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return {};
  const std::string old = path + ".old";
  if (rename(path.c_str(), old.c_str()) != 0) {
    return Fail(fmt::format("cannot rename {} to {}: {}", path, old, strerror(errno)));
  }
  return {};
}

int ShellStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

Result<RecordSummary> Recorder::Run() {
  auto target = ResolveTarget(options_.target);
  if (!target) return tl::unexpected(target.error());
  target_ = std::move(*target);
  counters_.assign(target_.cpus.size(), {});
  status_line_ = !options_.quiet && isatty(STDERR_FILENO);

  // Stop signals and SIGCHLD arrive through a signalfd polled with the
  // ring buffers; a command gets the original mask back before exec.
  sigset_t stop_signals, original;
  sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&stop_signals, sig);
  sigprocmask(SIG_BLOCK, &stop_signals, &original);
  UniqueFd signal_fd(signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signal_fd.valid()) return Fail(fmt::format("signalfd: {}", strerror(errno)));

  if (auto moved = MoveOldOutput(options_.output); !moved) return tl::unexpected(moved.error());
  format::WriterOptions writer_options;
  writer_options.zstd_level = options_.zstd_level;
  // Compression yields to the draining thread (and to the target): a 4 MiB
  // chunk takes milliseconds of zstd, as long as a small buffer lasts.
  writer_options.nice_increment = 10;
  auto writer = format::SampleFileWriter::Create(options_.output, writer_options);
  if (!writer) return tl::unexpected(writer.error());
  writer_ = std::move(*writer);

  pid_t child = -1;
  if (target_.kind == TargetKind::kCommand) {
    auto launcher = CommandLauncher::Start(options_.target.command, original);
    if (!launcher) return tl::unexpected(launcher.error());
    child = launcher->pid();
    launcher_.emplace(std::move(*launcher));
    target_.threads = {child};
  }
  auto abandon = [&](Error error) -> Result<RecordSummary> {
    if (child > 0) {
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    }
    writer_.reset();
    unlink(options_.output.c_str());
    return tl::unexpected(std::move(error));
  };

  if (auto opened = OpenEvents(); !opened) return abandon(opened.error());
  writer_->Submit(format::ChunkType::kEvents, format::EncodeEvents(opener_->DescribeFile()));
  writer_->Submit(format::ChunkType::kMetadata,
                  format::EncodeMetadata(CollectHostFacts(options_.invocation)));
  // A chunk is flushed once it reaches kChunkBytes after a DrainAll, which
  // adds at most every ring's size: with room for that twice, a flush can be
  // put off once (FlushChunk) without reallocating; put off longer, the
  // chunk grows (a copy on the draining thread, but nothing lost).
  chunk_capacity_ = kChunkBytes;
  for (size_t owner : opener_->ring_owners()) {
    chunk_capacity_ += 2 * opener_->events()[owner].ring().size();
  }
  chunk_.reserve(chunk_capacity_);

  start_ns_ = MonotonicNowNs();
  if (launcher_) {
    if (auto released = launcher_->Release(); !released) return abandon(released.error());
  }
  uint64_t enable_at = start_ns_ + options_.delay_ms * 1000000;
  if (auto ok = Start(); !ok) return abandon(ok.error());
  bool started = options_.delay_ms == 0;
  const uint64_t stop_at =
      options_.duration_s > 0 ? enable_at + static_cast<uint64_t>(options_.duration_s * 1e9) : 0;

  std::vector<pollfd> fds;
  fds.push_back({signal_fd.get(), POLLIN, 0});
  for (size_t owner : opener_->ring_owners()) {
    fds.push_back({opener_->events()[owner].fd(), POLLIN, 0});
  }

  bool child_done = false;
  int child_status = 0;
  int stop_signal = 0;
  uint64_t last_flush_ns = start_ns_;
  uint64_t last_target_check_ns = 0;
  const bool watching_targets =
      target_.kind == TargetKind::kProcesses || target_.kind == TargetKind::kThreads;
  RequestShortSlice();
  while (!child_done && stop_signal == 0) {
    uint64_t now = MonotonicNowNs();
    if (!started && now >= enable_at) {
      if (auto ok = StartSampling(); !ok) return abandon(ok.error());
      started = true;
    }
    if (stop_at != 0 && now >= stop_at) break;
    uint64_t deadline = last_flush_ns + kChunkMaxAgeNs;
    if (!started) deadline = std::min(deadline, enable_at);
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
      while (read(signal_fd.get(), &info, sizeof(info)) == sizeof(info)) {
        if (info.ssi_signo != SIGCHLD) stop_signal = static_cast<int>(info.ssi_signo);
      }
      if (child > 0 && waitpid(child, &child_status, WNOHANG) == child) child_done = true;
    }
    now = MonotonicNowNs();
    if (hangup || now >= last_target_check_ns + kTargetCheckIntervalNs) {
      last_target_check_ns = now;
      if (TargetsGone()) child_done = true;
    }
    DrainAll();
    if (chunk_.size() >= kChunkBytes || now >= last_flush_ns + kChunkMaxAgeNs) {
      // When the writer holds its lock, try again in a millisecond (not at
      // once: the deadline has passed, and polling with no wait would spin
      // against the writer we wait for).
      last_flush_ns = FlushChunk(/*wait=*/false) ? now : now - kChunkMaxAgeNs + kFlushRetryNs;
    }
    ShowStatus(now);
  }

  // Stop counting, then take what is left in every buffer.
  for (PerfEvent& event : opener_->events()) (void)event.Disable();
  DrainAll();
  FlushChunk(/*wait=*/true);
  if (child > 0 && !child_done) {
    // Stopped by a signal or --duration: pass the signal on (a terminal's
    // SIGINT reached the command already) and wait for the command to go.
    if (stop_signal != SIGINT) kill(child, stop_signal != 0 ? stop_signal : SIGTERM);
    waitpid(child, &child_status, 0);
  }
  return Finish(child > 0 ? ShellStatus(child_status) : 0);
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
  format::Trailer trailer = MakeTrailer(counters_);
  trailer.header.record_count = total_records_;
  trailer.header.start_clock_ns = first_time_ == UINT64_MAX ? 0 : first_time_;
  trailer.header.end_clock_ns = last_time_;
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
    PrintSummary(summary, counters_, target_.cpus, options_);
  }
  return summary;
}

}  // namespace

Result<RecordSummary> RunRecording(const RecordOptions& options) {
  Recorder recorder(options);
  return recorder.Run();
}

}  // namespace sample::record
