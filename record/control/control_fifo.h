// --control fifo:CTL[,ACK]: commands that switch sampling on and off while
// recording, as perf record's, and 'snapshot' (--flight-recorder: write
// the history kept in memory to a file).
//
// ParseControlSpec reads the option, ParseControlCommand one line of the
// control FIFO. ControlFifo owns the two FIFOs' fds: the control one is
// opened read-write and non-blocking, so that the recorder's poll sees no
// end of file (and no POLLHUP storm) when a writer closes and none has
// come yet; the acknowledgement one read-write too, so that opening it does
// not wait for a reader and an answer nobody reads is not an error. Lines
// are split from what arrives, whatever the writes' sizes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample::record {

struct ControlPaths {
  std::string control;
  std::string ack;  // empty: no answers
};

// "fifo:CTL" or "fifo:CTL,ACK". perf's fd:N form is refused by name.
Result<ControlPaths> ParseControlSpec(std::string_view spec);

struct ControlCommand {
  enum class Kind { kEnable, kDisable, kStop, kPing, kSnapshot, kUnknown };
  Kind kind = Kind::kUnknown;
  std::string event;  // enable/disable NAME; empty: every event
};

// One line, without its newline; surrounding blanks are ignored.
ControlCommand ParseControlCommand(std::string_view line);

class ControlFifo {
 public:
  // Refuses paths that are not FIFOs, FIFOs anyone may write, and another
  // user's FIFO in a directory others may create files in (/tmp;
  // CheckNotPlanted, judged on the directory the FIFO is opened from),
  // naming the path and its owner.
  static Result<ControlFifo> Open(const ControlPaths& paths);

  int fd() const { return control_.get(); }
  // Every complete line that has arrived (read until the FIFO is empty).
  // A line longer than kMaxLine is dropped with what follows up to its end.
  std::vector<std::string> ReadLines();
  // Writes "ack\n" (or "err\n") when there is an acknowledgement FIFO.
  void Answer(bool ok);

  static constexpr size_t kMaxLine = 4096;

 private:
  ControlFifo(UniqueFd control, UniqueFd ack)
      : control_(std::move(control)), ack_(std::move(ack)) {}

  UniqueFd control_;
  UniqueFd ack_;
  std::string partial_;    // bytes after the last newline
  bool skipping_ = false;  // inside an over-long line
};

// Splits `bytes` into lines, for ReadLines and its tests: complete
// lines are appended to `lines`, the rest stays in `partial`.
void SplitControlLines(std::string_view bytes, std::string& partial, bool& skipping,
                       std::vector<std::string>& lines);

}  // namespace sample::record
