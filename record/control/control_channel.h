// ControlChannel: the recorder's control from inside its own process.
// sample-top posts its commands here (stop, snapshot for the s key) from
// its own thread; the recording loop wakes on the channel's eventfd and
// runs them as SamplingControl runs the --control FIFO's lines, which are
// parsed into the same ControlCommand: the FIFO is an adapter of this one
// control, for other processes.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "libsample/result.h"
#include "libsample/unique_fd.h"
#include "record/control/control_fifo.h"

namespace sample::record {

class ControlChannel {
 public:
  static Result<ControlChannel> Create();
  ControlChannel(ControlChannel&& other) noexcept : wake_(std::move(other.wake_)) {}

  // The fd to poll: readable once a command was posted.
  int fd() const { return wake_.get(); }
  // From any thread.
  void Post(ControlCommand command);
  // The commands posted since the last call, in order (the loop's thread).
  std::vector<ControlCommand> Take();

 private:
  explicit ControlChannel(UniqueFd wake) : wake_(std::move(wake)) {}

  UniqueFd wake_;  // an eventfd
  std::mutex mutex_;
  std::vector<ControlCommand> pending_;
};

}  // namespace sample::record
