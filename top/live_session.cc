#include "top/live_session.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "libsample/perf/perf_event_advice.h"
#include "libsample/symbols/kallsyms_snapshot.h"
#include "record/facts/host_facts.h"

namespace sample::top {
namespace {

// What s keeps: the last hour, at most 256 MiB of records.
constexpr double kSaveSeconds = 3600;
constexpr uint64_t kSaveBytes = uint64_t{256} << 20;
// Chunks go to the view this often, so a refresh shows what is at most
// this old.
constexpr uint64_t kChunkAgeNs = 100'000'000;

}  // namespace

Result<std::unique_ptr<LiveSession>> LiveSession::Start(TopOptions options) {
  std::unique_ptr<LiveSession> session(new LiveSession(std::move(options)));
  TRY(session->Begin());
  return session;
}

Result<void> LiveSession::Begin() {
  // The recorder is controlled in this process: 'snapshot' for s, 'stop'
  // at the end.
  TRY_ASSIGN(auto channel, record::ControlChannel::Create());
  control_.emplace(std::move(channel));
  record::RecordOptions& record = options_.record;
  record.flight_seconds = kSaveSeconds;
  record.quiet = true;
  record::LiveHooks live;
  live.chunk_max_age_ns = kChunkAgeNs;
  live.history_byte_cap = kSaveBytes;
  live.opened = [this](const std::vector<EventDesc>& events) {
    std::lock_guard lock(mutex_);
    events_ = events;
    opened_ = true;
    changed_.notify_all();
  };
  live.chunk = [this](const format::RecordsChunk& chunk) { Keep(chunk); };
  live.snapshot = [this](const std::string& path, uint64_t samples) {
    std::lock_guard lock(mutex_);
    saved_ = fmt::format("saved {} ({} samples)", path, samples);
    changed_.notify_all();
  };
  live.snapshot_failed = [this](const std::string& error) {
    std::lock_guard lock(mutex_);
    saved_ = "not saved: " + error;
    changed_.notify_all();
  };
  sink_ = std::make_unique<record::FlightSink>(record.output, kSaveSeconds, /*quiet=*/true,
                                               std::move(live));
  // The stop signals wait for the recorder's signalfd: blocked here, and
  // so in the recorder's thread, which inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR2}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  recorder_ = std::thread([this] { RecorderThread(); });
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return opened_ || ended_; });
  if (!opened_) {
    Error error = result_->error();
    lock.unlock();
    recorder_.join();
    return tl::unexpected(std::move(error));
  }
  // Kernel symbols as addresses come, from the recorder's per-boot sorted
  // table where it covers them: reading and sorting the kernel's 5.4 MB
  // table took a quarter of sample-top's CPU over 20 s.
  auto kallsyms = std::make_shared<KallsymsFeed>(DefaultKallsymsSnapshotOptions());
  options_.load.kernel_symbol_feed = [kallsyms](const std::vector<uint64_t>& addresses) {
    return kallsyms->Select(addresses).symbols;
  };
  memory_ = std::make_unique<format::MemoryRecording>(
      "live", events_, record::CollectHostFacts(record.invocation), std::string());
  loader_ = std::make_unique<report::LiveLoader>(*memory_, options_.load);
  const auto paranoid = ReadPerfEventParanoid();
  for (const EventDesc& event : events_) {
    if (event.attr.exclude_kernel && paranoid && KernelExcludedByParanoia(paranoid)) {
      privileges_ = fmt::format(
          "user space only (perf_event_paranoid {}; root or CAP_PERFMON see the "
          "kernel)",
          *paranoid);
    }
  }
  return {};
}

void LiveSession::Keep(const format::RecordsChunk& chunk) {
  std::lock_guard lock(mutex_);
  // A view that is not refreshing (a prompt, a save) keeps at most this
  // much; the oldest chunks go first, and are counted.
  constexpr uint64_t kPendingCap = uint64_t{64} << 20;
  while (!pending_.empty() && pending_bytes_ + chunk.records.size() > kPendingCap) {
    ++dropped_chunks_;
    dropped_records_ += pending_.front().record_count;
    pending_bytes_ -= pending_.front().records.size();
    pending_.erase(pending_.begin());
  }
  pending_bytes_ += chunk.records.size();
  // A copy (the flight history keeps the chunk for s) into a buffer of an
  // earlier refresh.
  format::RecordsChunk copy;
  if (!free_.empty()) {
    copy.records = std::move(free_.back());
    free_.pop_back();
  }
  copy.records.assign(chunk.records.begin(), chunk.records.end());
  copy.record_count = chunk.record_count;
  copy.time_min = chunk.time_min;
  copy.time_max = chunk.time_max;
  copy.sample_time_offset = chunk.sample_time_offset;
  copy.cpu_field = chunk.cpu_field;
  copy.cpu_runs = chunk.cpu_runs;
  pending_.push_back(std::move(copy));
}

void LiveSession::RecorderThread() {
  auto result = record::RunRecording(options_.record, std::move(sink_), &*control_);
  std::lock_guard lock(mutex_);
  result_ = std::move(result);
  ended_ = true;
  changed_.notify_all();
}

LiveSession::~LiveSession() { Stop(); }

void LiveSession::Command(record::ControlCommand::Kind kind) {
  if (control_) control_->Post({kind, ""});
}

bool LiveSession::WaitForEnd(uint64_t ms) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return ended_; });
}

int LiveSession::Stop() {
  if (recorder_.joinable()) {
    bool ended = false;
    {
      std::lock_guard lock(mutex_);
      ended = ended_;
    }
    if (!ended) Command(record::ControlCommand::Kind::kStop);
    recorder_.join();
  }
  return exit_status();
}

std::string LiveSession::failure() const {
  std::lock_guard lock(mutex_);
  return result_ && !*result_ ? result_->error().message : "";
}

int LiveSession::exit_status() const {
  std::lock_guard lock(mutex_);
  if (!result_) return 0;
  if (!*result_) return 1;
  return (*result_)->stop_signal != 0 ? 128 + (*result_)->stop_signal : 0;
}

bool LiveSession::ended() const {
  std::lock_guard lock(mutex_);
  return ended_;
}

bool LiveSession::Refresh() {
  std::vector<format::RecordsChunk> chunks;
  bool ended = false;
  {
    std::lock_guard lock(mutex_);
    chunks.swap(pending_);
    pending_bytes_ = 0;
    ended = ended_;
  }
  if (ended && chunks.empty() && recording_ != nullptr) return false;
  memory_->SetChunks(std::move(chunks));
  recording_ = &loader_->Next();
  {
    std::lock_guard lock(mutex_);
    for (std::vector<std::byte>& buffer : memory_->TakeSpareBuffers()) {
      if (free_.size() < 64) free_.push_back(std::move(buffer));
    }
  }
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[16];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &local);
  refreshed_ = stamp;
  return true;
}

std::string LiveSession::Note() const {
  std::string note = refreshed_;
  if (!privileges_.empty()) note += " | " + privileges_;
  if (!last_save_.empty()) note += " | " + last_save_;
  std::lock_guard lock(mutex_);
  if (dropped_chunks_ != 0) {
    note += fmt::format(" | {} records dropped while the view was busy", dropped_records_);
  }
  return note;
}

std::string LiveSession::Save() {
  {
    std::lock_guard lock(mutex_);
    saved_.reset();
  }
  Command(record::ControlCommand::Kind::kSnapshot);
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, std::chrono::seconds(10), [this] { return saved_ || ended_; }) ||
      !saved_) {
    return "not saved: the recorder did not answer";
  }
  if (saved_->starts_with("saved ")) last_save_ = *saved_;
  return *saved_;
}

}  // namespace sample::top
