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
#include <string_view>
#include <utility>
#include <vector>

#include "formats/sample_file_writer.h"
#include "libsample/result.h"
#include "record/control/control_channel.h"
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
  // `channel`: commands posted in this process (sample-top), or null.
  static Result<SamplingControl> Create(EventOpener& opener, ChunkSink sink,
                                        const std::string& control, bool log, bool tell,
                                        bool snapshots = false, ControlChannel* channel = nullptr);

  // The FIFO to poll, or -1.
  int fd() const { return fifo_ ? fifo_->fd() : -1; }
  // The channel's fd to poll, or -1.
  int channel_fd() const { return channel_ != nullptr ? channel_->fd() : -1; }
  // The recorder turned every sampling event on (or off) at `time_ns`.
  void Switched(bool on, uint64_t time_ns);
  // Runs the commands that have arrived, the FIFO's then the channel's.
  // True when one was "stop". A
  // command that cannot be done (unknown name) is refused with a message;
  // only the kernel refusing to switch an event fails.
  Result<bool> RunCommands();
  // A command switched sampling: -D's timer no longer applies.
  bool commanded() const { return commanded_; }
  // 'snapshot' commands arrived since the last call (one file serves
  // them all); the recorder writes it, then answers with AnswerSnapshot.
  bool TakeSnapshotRequest();
  void AnswerSnapshot(bool ok);

 private:
  SamplingControl(EventOpener& opener, ChunkSink sink, std::optional<ControlFifo> fifo,
                  ControlChannel* channel, bool log, bool tell, bool snapshots)
      : opener_(opener),
        sink_(std::move(sink)),
        fifo_(std::move(fifo)),
        channel_(channel),
        log_(log),
        tell_(tell),
        snapshots_(snapshots) {}
  // One command; `line` as the user wrote it, for messages. True: stop.
  Result<bool> Run(const ControlCommand& command, std::string_view line, bool from_fifo);
  void Log(bool on, uint32_t event, uint64_t time_ns);
  void Tell(const std::string& what) const;

  EventOpener& opener_;
  ChunkSink sink_;
  std::optional<ControlFifo> fifo_;
  ControlChannel* channel_;
  bool log_;
  bool tell_;
  bool snapshots_;
  bool commanded_ = false;
  uint32_t snapshots_requested_ = 0;
  uint32_t fifo_snapshots_ = 0;  // of those, the FIFO's: answered there
};

}  // namespace sample::record
