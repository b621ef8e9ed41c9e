// RecordingLoop: what a recording does between its start and its end, as
// one handler per source on an EventLoop (record/control/event_loop.h):
//
//   the signalfd     stop signals end the recording; SIGCHLD, the
//                    command's end; SIGUSR2, a flight snapshot
//   --control FIFO   its commands (enable, disable, stop, snapshot), and
//   the channel      the same posted in this process (sample-top)
//   event fds        a hangup (a target thread gone) asks for a target
//                    check at once
//   every wakeup     drain every ring; a full chunk goes to the writer;
//                    the status line
//   timers           -D's delay ends; --duration ends; -p/-t targets are
//                    checked for having exited; a chunk goes to the writer
//                    when old enough; the output is cut (CutPolicy: a
//                    snapshot, the next file)
//
// Run returns why it ended (StopCause). Owns the loop and the timers'
// state; everything in LoopParts belongs to the recorder and outlives it.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <utility>

#include "formats/sample_file_writer.h"
#include "libsample/result.h"
#include "libsample/unique_fd.h"
#include "record/control/event_loop.h"
#include "record/control/sampling_control.h"
#include "record/drain/ring_drainer.h"
#include "record/output/record_sink.h"
#include "record/events/event_opener.h"
#include "record/target/record_target.h"
#include "record/recorder.h"

namespace sample::record {

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

// Blocks the stop signals (SIGINT, SIGTERM, SIGHUP), SIGCHLD and, for
// `snapshots` (--flight-recorder), SIGUSR2, and returns the signalfd they
// arrive through; `original_mask` gets the mask a command execs with.
Result<UniqueFd> BlockRecordingSignals(bool snapshots, sigset_t* original_mask);

// What the loop works with, the recorder's.
struct LoopParts {
  const RecordOptions& options;
  const RecordTarget& target;
  EventOpener& opener;
  RingDrainer& drainer;
  SamplingControl& control;
  RecordSink& sink;
  int signal_fd;     // from BlockRecordingSignals
  pid_t child;       // the command, or -1
  uint64_t start_ns;  // the events went on
  bool status_line;  // a status line on stderr
  // Cuts the sink's output (the recorder knows the closing chunks).
  std::function<Result<void>()> cut;
};

class RecordingLoop {
 public:
  explicit RecordingLoop(LoopParts parts);
  // The handlers hold `this`.
  RecordingLoop(const RecordingLoop&) = delete;
  RecordingLoop& operator=(const RecordingLoop&) = delete;
  Result<StopCause> Run();

 private:
  Result<void> OnSignals();
  Result<void> OnControl();
  void Drain();
  // Hands the pending chunk to the writer and arms the next age flush.
  void FlushChunk(uint64_t now);
  void ShowStatus();
  Result<void> StartSampling();
  void CheckTargets(uint64_t now);
  // A cut of the output (CutPolicy): a snapshot, or the next file.
  void CutOutput(uint64_t now);

  LoopParts parts_;
  const CutPolicy cut_policy_ = parts_.sink.cut_policy();
  EventLoop loop_;
  StopCause cause_;
  bool watching_targets_;  // -p/-t: checked for having exited
  // What this pass's fds said: an exec waker, a sampling ring.
  bool exec_woke_ = false;
  bool ring_woke_ = false;
  uint64_t max_age_;       // of a chunk before it goes to the writer
  uint64_t last_status_ns_ = 0;
  bool snapshot_commanded_ = false;  // answer the FIFO once written
  EventLoop::TimerId enable_timer_ = 0;
  EventLoop::TimerId target_timer_ = 0;
  EventLoop::TimerId flush_timer_ = 0;
  EventLoop::TimerId cut_timer_ = 0;
};

}  // namespace sample::record
