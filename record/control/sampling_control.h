// SamplingControl: switches the sampling events on and off while a
// recording runs, and writes down when.
//
// The recorder tells it when it turned sampling on itself (at the start, or
// when -D's delay is over) and when recording ended; the --control FIFO's
// commands (record/control/control_fifo.h) switch every sampling event or one by
// name, answered with "ack" (or "err" for a command refused). Every switch
// becomes a kControl chunk of its own as it happens, so the report can show
// the windows of enablement, even of a recorder that died. A 'snapshot'
// command is left to the recorder (--flight-recorder), which answers it
// once the file is written. Owns the FIFO; uses the recorder's events and
// hands the chunks to the recorder's sink (its file writer, or the flight
// recorder's memory).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/result.h"
#include "record/control/control_fifo.h"
#include "record/events/event_opener.h"

namespace sample::record {

class SamplingControl {
 public:
  // Where a kControl chunk goes.
  using ChunkSink = std::function<void(format::ChunkType, std::vector<std::byte>, uint64_t)>;

  // `control`: --control's value, empty when not given; `log`: write the
  // switches to the file even without it (-D; --alloc attaching). `tell`:
  // say on stderr when a command switched sampling (a terminal, not -q).
  // `snapshots`: 'snapshot' is accepted (--flight-recorder), else refused.
  static Result<SamplingControl> Create(EventOpener& opener, ChunkSink sink,
                                        const std::string& control, bool log, bool tell,
                                        bool snapshots = false);

  // The FIFO to poll, or -1.
  int fd() const { return fifo_ ? fifo_->fd() : -1; }
  // The recorder turned every sampling event on (or off) at `time_ns`.
  void Switched(bool on, uint64_t time_ns);
  // Runs the commands that have arrived. True when one was "stop". A
  // command that cannot be done (unknown name) is refused with a message;
  // only the kernel refusing to switch an event fails.
  Result<bool> RunCommands();
  // A command switched sampling: -D's timer no longer applies.
  bool commanded() const { return commanded_; }
  // A 'snapshot' command arrived since the last call; the recorder writes
  // the file, then answers with AnswerSnapshot.
  bool TakeSnapshotRequest() { return std::exchange(snapshot_requested_, false); }
  void AnswerSnapshot(bool ok) {
    if (fifo_) fifo_->Answer(ok);
  }

 private:
  SamplingControl(EventOpener& opener, ChunkSink sink, std::optional<ControlFifo> fifo, bool log,
                  bool tell, bool snapshots)
      : opener_(opener),
        sink_(std::move(sink)),
        fifo_(std::move(fifo)),
        log_(log),
        tell_(tell),
        snapshots_(snapshots) {}
  void Log(bool on, uint32_t event, uint64_t time_ns);
  void Tell(const std::string& what) const;

  EventOpener& opener_;
  ChunkSink sink_;
  std::optional<ControlFifo> fifo_;
  bool log_;
  bool tell_;
  bool snapshots_;
  bool commanded_ = false;
  bool snapshot_requested_ = false;
};

}  // namespace sample::record
