// RaisedMaxStack: kernel.perf_event_max_stack raised for one recording
// (sample-record --max-stack N --raise-max-stack) and set back after it,
// however the recorder ends.
//
// The sysctl applies to every process on the machine, so it must never be
// left raised. The recorder sets it back when it finishes; for the ends it
// cannot see (SIGKILL, a crash), a guardian process forked before the
// change holds the read end of a pipe whose write end only the recorder
// has: when the recorder dies for any reason the kernel closes that end,
// the guardian's read returns, and it writes the old value back (if the
// sysctl still holds ours; the kernel refuses while any event with call
// chains exists, so both retry on EBUSY: the recorder for two seconds, the
// guardian until it succeeds). The
// guardian leaves the recorder's session and ignores terminal signals, so
// a Ctrl-C or a kill of the process group does not take it first. Owns the
// pipe's write end; the guardian exits on its own.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample::record {

class RaisedMaxStack {
 public:
  // Raises the sysctl from its current value to `frames` (needs root or
  // CAP_SYS_ADMIN: the error says so).
  static Result<RaisedMaxStack> Raise(int frames);
  RaisedMaxStack(RaisedMaxStack&&) noexcept = default;
  RaisedMaxStack& operator=(RaisedMaxStack&&) noexcept = default;
  // Sets the old value back (and lets the guardian go).
  ~RaisedMaxStack();

  int old_value() const { return old_; }

 private:
  RaisedMaxStack(int old, int raised, UniqueFd guardian)
      : old_(old), raised_(raised), guardian_(std::move(guardian)) {}
  int old_ = 0;
  int raised_ = 0;
  UniqueFd guardian_;  // write end of the guardian's pipe; invalid once moved from
};

// --max-stack `max_stack` (0: not given) against the kernel's limit: nothing
// to do when within it (nullopt); above it, raised for the recording with
// --raise-max-stack (`raise`; said on stderr unless `quiet`), refused
// without it. The kernel's own refusal (EOVERFLOW) says nothing of the
// limit: this one names it and the ways around it.
Result<std::optional<RaisedMaxStack>> RaiseMaxStackIfNeeded(uint32_t max_stack, bool raise,
                                                            bool quiet);

}  // namespace sample::record
