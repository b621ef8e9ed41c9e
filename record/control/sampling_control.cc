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
                                                bool snapshots) {
  std::optional<ControlFifo> fifo;
  if (!control.empty()) {
    TRY_ASSIGN(auto paths, ParseControlSpec(control));
    TRY_ASSIGN(auto opened, ControlFifo::Open(paths));
    fifo.emplace(std::move(opened));
  }
  return SamplingControl(opener, std::move(sink), std::move(fifo), log || fifo.has_value(), tell,
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
  if (!fifo_) return false;
  bool stop = false;
  for (const std::string& line : fifo_->ReadLines()) {
    const ControlCommand command = ParseControlCommand(line);
    using Kind = ControlCommand::Kind;
    if (command.kind == Kind::kUnknown) {
      fmt::print(stderr,
                 "sample-record: --control: unknown command '{}' ignored (enable [EVENT], "
                 "disable [EVENT], stop, ping, snapshot)\n",
                 Printable(line));
      fifo_->Answer(false);
      continue;
    }
    if (command.kind == Kind::kSnapshot) {
      if (!snapshots_) {
        fmt::print(stderr,
                   "sample-record: --control: 'snapshot' needs --flight-recorder; ignored\n");
        fifo_->Answer(false);
      } else {
        snapshot_requested_ = true;  // answered once written
      }
      continue;
    }
    if (command.kind == Kind::kPing || command.kind == Kind::kStop) {
      stop |= command.kind == Kind::kStop;
      fifo_->Answer(true);
      continue;
    }
    const bool on = command.kind == Kind::kEnable;
    std::optional<size_t> spec;
    if (!command.event.empty()) {
      auto found = opener_.FindSwitchable(command.event);
      if (!found) {
        // The message holds the name as written: escaped too.
        fmt::print(stderr, "sample-record: --control: '{}': {}; ignored\n", Printable(line),
                   Printable(found.error().message, 1000));
        fifo_->Answer(false);
        continue;
      }
      spec = *found;
    }
    // The window holds every sample taken in it: it opens before the
    // events are on and closes after they are off.
    const uint64_t before = MonotonicNowNs();
    TRY(opener_.SetSampling(on, spec));
    Log(on, spec ? static_cast<uint32_t>(*spec) : format::kControlAllEvents,
        on ? before : MonotonicNowNs());
    commanded_ = true;
    Tell(fmt::format("recording {}{}", on ? "enabled" : "disabled",
                     spec ? fmt::format(" for {}", command.event) : ""));
    fifo_->Answer(true);
  }
  return stop;
}

}  // namespace sample::record
