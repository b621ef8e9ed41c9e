#include "record/record_session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "formats/sample_file_writer.h"
#include "libsample/cpu_list.h"
#include "libsample/event_spec.h"
#include "libsample/perf_event.h"
#include "libsample/perf_event_advice.h"
#include "libsample/perf_record.h"
#include "libsample/record_walker.h"
#include "libsample/unique_fd.h"
#include "record/command_launcher.h"
#include "record/host_facts.h"

namespace sample::record {
namespace {

// A chunk goes to the writer when it reaches this size or this age, so a
// killed recorder loses at most the last half second.
constexpr size_t kChunkBytes = 4 << 20;
constexpr uint64_t kChunkMaxAgeNs = 500'000'000;

perf_event_attr BuildAttr(const RecordOptions& options, const EventSpec& spec) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = spec.type;
  attr.config = spec.config;
  if (options.period != 0) {
    attr.sample_period = options.period;
  } else {
    attr.freq = 1;
    attr.sample_freq = options.frequency;
  }
  // IDENTIFIER first: every record names its event, whatever the layout.
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  if (options.callchain) attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.sample_id_all = 1;
  attr.exclude_hv = 1;
  // Wake up when a quarter of the buffer is full: early enough that a burst
  // does not overflow it before we drain.
  attr.watermark = 1;
  attr.wakeup_watermark =
      static_cast<uint32_t>(options.mmap_pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)) / 4);
  const auto paranoid = ReadPerfEventParanoid();
  if (geteuid() != 0 && paranoid && *paranoid >= 2) attr.exclude_kernel = 1;
  return attr;
}

struct CpuCounters {
  uint64_t samples = 0;
  uint64_t lost_samples = 0;
  uint64_t lost_records = 0;
  uint64_t dropped_samples = 0;
  uint64_t throttles = 0;
};

class Recorder {
 public:
  explicit Recorder(const RecordOptions& options) : options_(options) {}
  Result<RecordSummary> Run();

 private:
  Result<void> OpenEvents(pid_t pid);
  Result<void> OpenEventsFor(const EventSpec& spec, pid_t pid);
  void DrainAll();
  void Account(size_t cpu_index, std::span<const std::byte> bytes);
  void FlushChunk();

  const RecordOptions& options_;
  std::vector<int> cpus_;
  perf_event_attr attr_{};
  std::string event_name_;
  std::vector<PerfEvent> events_;  // one per CPU, same order as cpus_
  std::vector<CpuCounters> counters_;
  std::unique_ptr<format::SampleFileWriter> writer_;

  std::vector<std::byte> chunk_;
  uint64_t chunk_records_ = 0;
  uint64_t chunk_time_min_ = UINT64_MAX;
  uint64_t chunk_time_max_ = 0;
  uint64_t total_records_ = 0;
  uint64_t first_time_ = UINT64_MAX;
  uint64_t last_time_ = 0;
};

Result<void> Recorder::OpenEventsFor(const EventSpec& spec, pid_t pid) {
  attr_ = BuildAttr(options_, spec);
  event_name_ = spec.name;
  events_.clear();
  for (int cpu : cpus_) {
    auto event = PerfEvent::Open(attr_, pid, cpu, -1, 0);
    if (!event) return tl::unexpected(event.error());
    events_.push_back(std::move(*event));
  }
  return {};
}

Result<void> Recorder::OpenEvents(pid_t pid) {
  auto spec = LookupEvent(options_.event);
  if (!spec) return tl::unexpected(spec.error());
  auto opened = OpenEventsFor(*spec, pid);
  const bool no_pmu = !opened && (opened.error().sys_errno == ENOENT ||
                                  opened.error().sys_errno == EOPNOTSUPP);
  if (no_pmu && spec->type == PERF_TYPE_HARDWARE && !options_.event_given) {
    // perf does the same: no PMU (typical in VMs) means a timer-based event.
    fmt::print(stderr,
               "sample-record: the hardware event '{}' is not available here (no PMU); "
               "using cpu-clock instead.\n",
               spec->name);
    return OpenEventsFor(*LookupEvent("cpu-clock"), pid);
  }
  return opened;
}

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
  for (size_t i = 0; i < events_.size(); ++i) {
    const size_t before = chunk_.size();
    if (events_[i].ring().Drain(chunk_) != 0) {
      Account(i, std::span<const std::byte>(chunk_).subspan(before));
    }
  }
}

void Recorder::FlushChunk() {
  if (chunk_.empty()) return;
  total_records_ += chunk_records_;
  if (chunk_time_min_ != UINT64_MAX) {
    first_time_ = std::min(first_time_, chunk_time_min_);
    last_time_ = std::max(last_time_, chunk_time_max_);
  }
  writer_->Submit(format::ChunkType::kRecords, std::move(chunk_), chunk_records_,
                  chunk_time_min_ == UINT64_MAX ? 0 : chunk_time_min_, chunk_time_max_);
  chunk_ = {};
  chunk_.reserve(kChunkBytes + options_.mmap_pages * 4096 * events_.size());
  chunk_records_ = 0;
  chunk_time_min_ = UINT64_MAX;
  chunk_time_max_ = 0;
}

// Moves an existing output aside as FILE.old, as perf does.
Result<void> MoveOldOutput(const std::string& path) {
  struct stat st{};
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

std::string HumanBytes(uint64_t bytes) {
  if (bytes < 10 * 1024) return fmt::format("{} B", bytes);
  if (bytes < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
}

Result<RecordSummary> Recorder::Run() {
  auto cpus = OnlineCpus();
  if (!cpus) return tl::unexpected(cpus.error());
  cpus_ = *cpus;
  counters_.assign(cpus_.size(), {});

  // Stop signals and SIGCHLD arrive through a signalfd polled with the
  // ring buffers; the command gets the original mask back before exec.
  sigset_t stop_signals, original;
  sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&stop_signals, sig);
  sigprocmask(SIG_BLOCK, &stop_signals, &original);
  UniqueFd signal_fd(signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signal_fd.valid()) return Fail(fmt::format("signalfd: {}", strerror(errno)));

  if (auto moved = MoveOldOutput(options_.output); !moved) return tl::unexpected(moved.error());
  format::WriterOptions writer_options;
  writer_options.zstd_level = options_.zstd_level;
  auto writer = format::SampleFileWriter::Create(options_.output, writer_options);
  if (!writer) return tl::unexpected(writer.error());
  writer_ = std::move(*writer);

  auto launcher = CommandLauncher::Start(options_.command, original);
  if (!launcher) return tl::unexpected(launcher.error());
  const pid_t child = launcher->pid();
  auto abandon = [&](Error error) -> Result<RecordSummary> {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    writer_.reset();
    unlink(options_.output.c_str());
    return tl::unexpected(std::move(error));
  };

  if (auto opened = OpenEvents(child); !opened) return abandon(opened.error());
  for (PerfEvent& event : events_) {
    if (auto mapped = event.Map(options_.mmap_pages); !mapped) return abandon(mapped.error());
  }
  EventDesc desc;
  desc.attr = attr_;
  desc.name = event_name_;
  for (const PerfEvent& event : events_) desc.ids.push_back(event.id());
  writer_->Submit(format::ChunkType::kEvents, format::EncodeEvents({desc}));
  writer_->Submit(format::ChunkType::kMetadata,
                  format::EncodeMetadata(CollectHostFacts(options_.invocation)));
  chunk_.reserve(kChunkBytes + options_.mmap_pages * 4096 * events_.size());

  const uint64_t start_ns = MonotonicNowNs();
  if (auto released = launcher->Release(); !released) return abandon(released.error());

  std::vector<pollfd> fds;
  fds.push_back({signal_fd.get(), POLLIN, 0});
  for (const PerfEvent& event : events_) fds.push_back({event.fd(), POLLIN, 0});

  bool child_done = false;
  int child_status = 0;
  int stop_signal = 0;
  uint64_t last_flush_ns = start_ns;
  while (!child_done && stop_signal == 0) {
    const uint64_t now = MonotonicNowNs();
    const uint64_t deadline = last_flush_ns + kChunkMaxAgeNs;
    const int timeout_ms = now >= deadline ? 0 : static_cast<int>((deadline - now) / 1000000 + 1);
    const int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) return Fail(fmt::format("poll: {}", strerror(errno)));
    for (size_t i = 1; i < fds.size(); ++i) {
      // An event whose task is gone reports POLLHUP forever; stop polling it
      // (its buffer is still drained below and at the end).
      if (fds[i].revents & (POLLHUP | POLLERR)) fds[i].fd = -1;
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info;
      while (read(signal_fd.get(), &info, sizeof(info)) == sizeof(info)) {
        if (info.ssi_signo != SIGCHLD) stop_signal = static_cast<int>(info.ssi_signo);
      }
      if (waitpid(child, &child_status, WNOHANG) == child) child_done = true;
    }
    DrainAll();
    if (chunk_.size() >= kChunkBytes || MonotonicNowNs() >= deadline) {
      FlushChunk();
      last_flush_ns = MonotonicNowNs();
    }
  }

  // Stop counting, then take what is left in every buffer.
  for (PerfEvent& event : events_) (void)event.Disable();
  DrainAll();
  FlushChunk();
  const double seconds = (MonotonicNowNs() - start_ns) / 1e9;

  format::Trailer trailer;
  for (const CpuCounters& c : counters_) {
    format::TrailerCpu cpu{};
    cpu.samples = c.samples;
    cpu.lost_samples = c.lost_samples;
    cpu.lost_records = c.lost_records;
    cpu.dropped_samples = c.dropped_samples;
    cpu.throttles = c.throttles;
    trailer.cpus.push_back(cpu);
    trailer.header.sample_count += c.samples;
    trailer.header.lost_samples += c.lost_samples + c.dropped_samples;
  }
  trailer.header.record_count = total_records_;
  trailer.header.start_clock_ns = first_time_ == UINT64_MAX ? 0 : first_time_;
  trailer.header.end_clock_ns = last_time_;
  trailer.header.bytes_raw = writer_->raw_bytes();
  if (auto finished = writer_->Finish(trailer); !finished) {
    return Fail(fmt::format("{}: {}", options_.output, finished.error().message));
  }

  if (!child_done) {
    // Stopped by a signal: pass it on (a terminal's SIGINT reached the
    // command already) and wait for the command to go.
    if (stop_signal != SIGINT) kill(child, stop_signal);
    waitpid(child, &child_status, 0);
  }
  events_.clear();

  RecordSummary summary;
  summary.samples = trailer.header.sample_count;
  summary.lost_samples = trailer.header.lost_samples;
  summary.bytes_written = writer_->bytes_written();
  summary.raw_bytes = trailer.header.bytes_raw;
  summary.seconds = seconds;
  summary.exit_status = ShellStatus(child_status);
  if (!options_.quiet) {
    const double ratio =
        summary.bytes_written ? double(summary.raw_bytes) / summary.bytes_written : 0;
    fmt::print(stderr, "[ sample-record: {} samples, {} lost, {:.2f} s, {} written ({:.1f}x compressed), {} ]\n",
               summary.samples, summary.lost_samples, summary.seconds,
               HumanBytes(summary.bytes_written), ratio, options_.output);
    if (summary.lost_samples != 0) {
      std::string per_cpu;
      for (size_t i = 0; i < cpus_.size(); ++i) {
        const uint64_t lost = counters_[i].lost_samples + counters_[i].dropped_samples;
        if (lost != 0) per_cpu += fmt::format(" cpu{}:{}", cpus_[i], lost);
      }
      fmt::print(stderr,
                 "sample-record: WARNING: {} samples lost ({}); use a larger buffer (-m {}) "
                 "or a lower frequency (-F).\n",
                 summary.lost_samples, per_cpu.substr(1), options_.mmap_pages * 4);
    }
  }
  return summary;
}

}  // namespace

Result<RecordSummary> RunRecording(const RecordOptions& options) {
  Recorder recorder(options);
  return recorder.Run();
}

}  // namespace sample::record
