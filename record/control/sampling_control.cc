#include "record/control/sampling_control.h"

#include <cstdio>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "formats/chunk_codec.h"
#include "record/facts/host_facts.h"

namespace sample::record {
namespace {

// Text from the FIFO as it may be shown on a terminal: at most `max`
// characters, control characters as '?'.
std::string Printable(std::string_view line, size_t max = 80) {
  std::string out(line.substr(0, max));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

}  // namespace

Result<SamplingControl> SamplingControl::Create(EventOpener& opener, ChunkSink sink,
                                                const std::string& control, bool log, bool tell,
                                                bool snapshots, ControlChannel* channel) {
  std::optional<ControlFifo> fifo;
  if (!control.empty()) {
    TRY_ASSIGN(auto paths, ParseControlSpec(control));
    TRY_ASSIGN(auto opened, ControlFifo::Open(paths));
    fifo.emplace(std::move(opened));
  }
  const bool logged = log || fifo.has_value() || channel != nullptr;
  return SamplingControl(opener, std::move(sink), std::move(fifo), channel, logged, tell,
                         snapshots);
}

void SamplingControl::Log(bool on, uint32_t event, uint64_t time_ns) {
  if (!log_) return;
  format::ControlEntry entry{};
  entry.time_ns = time_ns;
  entry.action = on ? format::kControlEnable : format::kControlDisable;
  entry.event = event;
  sink_(format::ChunkType::kControl, format::EncodeControl({entry}), 1);
}

void SamplingControl::Tell(const std::string& what) const {
  if (!tell_) return;
  // The status line is redrawn after.
  fmt::print(stderr, "\r\033[Ksample-record: {}\n", what);
}

void SamplingControl::Switched(bool on, uint64_t time_ns) {
  Log(on, format::kControlAllEvents, time_ns);
}

Result<bool> SamplingControl::RunCommands() {
  bool stop = false;
  if (fifo_) {
    // The FIFO's lines are the same commands, answered on its ACK FIFO.
    for (const std::string& line : fifo_->ReadLines()) {
      TRY_ASSIGN(const bool stopped, Run(ParseControlCommand(line), line, /*from_fifo=*/true));
      stop |= stopped;
    }
  }
  if (channel_ != nullptr) {
    for (const ControlCommand& command : channel_->Take()) {
      TRY_ASSIGN(const bool stopped, Run(command, command.event, /*from_fifo=*/false));
      stop |= stopped;
    }
  }
  return stop;
}

Result<bool> SamplingControl::Run(const ControlCommand& command, std::string_view line,
                                  bool from_fifo) {
  auto answer = [&](bool ok) {
    if (from_fifo) fifo_->Answer(ok);
  };
  using Kind = ControlCommand::Kind;
  if (command.kind == Kind::kUnknown) {
    fmt::print(stderr,
               "sample-record: --control: unknown command '{}' ignored (enable [EVENT], "
               "disable [EVENT], stop, ping, snapshot)\n",
               Printable(line));
    answer(false);
    return false;
  }
  if (command.kind == Kind::kSnapshot) {
    if (!snapshots_) {
      fmt::print(stderr, "sample-record: --control: 'snapshot' needs --flight-recorder; ignored\n");
      answer(false);
    } else {
      ++snapshots_requested_;  // answered once written
      if (from_fifo) ++fifo_snapshots_;
    }
    return false;
  }
  if (command.kind == Kind::kPing || command.kind == Kind::kStop) {
    answer(true);
    return command.kind == Kind::kStop;
  }
  const bool on = command.kind == Kind::kEnable;
  std::optional<size_t> spec;
  if (!command.event.empty()) {
    auto found = opener_.FindSwitchable(command.event);
    if (!found) {
      // The message holds the name as written: escaped too.
      fmt::print(stderr, "sample-record: --control: '{}': {}; ignored\n", Printable(line),
                 Printable(found.error().message, 1000));
      answer(false);
      return false;
    }
    spec = *found;
  }
  // The window holds every sample taken in it: it opens before the events
  // are on and closes after they are off.
  const uint64_t before = MonotonicNowNs();
  TRY(opener_.SetSampling(on, spec));
  Log(on, spec ? static_cast<uint32_t>(*spec) : format::kControlAllEvents,
      on ? before : MonotonicNowNs());
  commanded_ = true;
  Tell(fmt::format("recording {}{}", on ? "enabled" : "disabled",
                   spec ? fmt::format(" for {}", command.event) : ""));
  answer(true);
  return false;
}

bool SamplingControl::TakeSnapshotRequest() { return std::exchange(snapshots_requested_, 0) > 0; }

void SamplingControl::AnswerSnapshot(bool ok) {
  // The requests that came through the FIFO are answered there, each.
  for (; fifo_ && fifo_snapshots_ > 0; --fifo_snapshots_) fifo_->Answer(ok);
}

}  // namespace sample::record
