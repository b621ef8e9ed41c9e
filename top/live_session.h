// LiveSession: sample-top's recording and its refreshes. The recorder
// (record/recorder.h) runs on a thread of its own in memory, as the flight
// recorder does, into a FlightSink whose LiveHooks hand over every chunk
// it drains; each refresh gives the chunks since the last one to a
// MemoryRecording and the LiveLoader (report/load/recording_loader.h),
// which keeps processes, mappings and symbol sources between refreshes, so
// a refresh costs the new samples only. The recorder is controlled in this
// process through a ControlChannel: 'snapshot' for the s key, 'stop' at
// the end. Stop signals reach the recorder (its signalfd) and end the
// session.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "formats/memory_recording.h"
#include "libsample/result.h"
#include "record/control/control_channel.h"
#include "record/output/flight_sink.h"
#include "record/recorder.h"
#include "report/load/recording_loader.h"
#include "report/tui/terminal_browser.h"

namespace sample::top {

struct TopOptions {
  record::RecordOptions record;  // the target, events, -F, -g; `output`: where s saves
  uint64_t interval_ms = 1000;   // -d
  report::LoadOptions load;
};

class LiveSession final : public report::LiveFeed {
 public:
  // Blocks the stop signals in the calling thread (and so in the
  // recorder's, started from it), starts the recorder and waits until its
  // events are open. Errors: the recorder's (privileges, events), said as
  // sample-record says them.
  static Result<std::unique_ptr<LiveSession>> Start(TopOptions options);
  ~LiveSession() override;

  // The recording Refresh keeps current.
  const report::Recording& recording() const { return *recording_; }
  // Distinct code locations named so far (each once, over all refreshes).
  size_t locations() const { return loader_->locations(); }
  // Waits up to `ms` for the recorder to end; true if it has.
  bool WaitForEnd(uint64_t ms);
  // Stops the recorder (if still running), removes the control FIFO and
  // returns the exit status: 128 + N after signal N, 1 if the recorder
  // failed (said on stderr). What is left to free is only memory.
  int Stop();

  uint64_t interval_ms() const override { return options_.interval_ms; }
  bool Refresh() override;
  std::string Save() override;
  // The refresh's wall-clock time (every refresh shows a new one), then
  // what there is to say: the last save, a user-space-only session.
  std::string Note() const override;
  // Why the recorder stopped on its own, if it failed (a write, a
  // target it could no longer follow); empty otherwise.
  std::string failure() const;
  int exit_status() const override;
  bool ended() const override;

 private:
  explicit LiveSession(TopOptions options) : options_(std::move(options)) {}
  Result<void> Begin();
  void RecorderThread();
  // A chunk the recorder drained, copied for the next refresh.
  void Keep(const format::RecordsChunk& chunk);
  void Command(record::ControlCommand::Kind kind);

  TopOptions options_;
  std::optional<record::ControlChannel> control_;
  std::unique_ptr<record::RecordSink> sink_;  // the recorder's, until it starts
  std::thread recorder_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool opened_ = false;
  bool ended_ = false;
  std::vector<EventDesc> events_;
  std::vector<format::RecordsChunk> pending_;
  uint64_t pending_bytes_ = 0;
  // Chunks dropped while the view was busy (a prompt, a save) and their
  // records: said in the title, never silent.
  uint64_t dropped_chunks_ = 0;
  uint64_t dropped_records_ = 0;
  std::vector<std::vector<std::byte>> free_;  // buffers for the next copies
  std::optional<Result<record::RecordSummary>> result_;
  std::optional<std::string> saved_;  // the last snapshot's line

  std::unique_ptr<format::MemoryRecording> memory_;
  std::unique_ptr<report::LiveLoader> loader_;
  const report::Recording* recording_ = nullptr;
  std::string privileges_;  // what the session cannot see, and why
  std::string last_save_;   // the last s's file
  std::string refreshed_;   // "HH:MM:SS" of the last refresh
};

}  // namespace sample::top
