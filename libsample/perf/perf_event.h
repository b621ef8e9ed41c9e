// PerfEvent: one perf_event_open(2) file descriptor and, once mapped, its
// ring buffer. Move-only; closing unmaps and closes.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "libsample/perf/ring_buffer.h"
#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample {

class PerfEvent {
 public:
  // Opens the event; on failure the message explains the errno in terms a
  // user can act on (see perf_event_advice.h).
  static Result<PerfEvent> Open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                                unsigned long flags);

  PerfEvent(PerfEvent&& other) noexcept;
  PerfEvent& operator=(PerfEvent&& other) noexcept;
  PerfEvent(const PerfEvent&) = delete;
  PerfEvent& operator=(const PerfEvent&) = delete;
  ~PerfEvent();

  int fd() const { return fd_.get(); }
  uint64_t id() const { return id_; }

  // Maps 1 + data_pages pages (data_pages a power of two) for the ring buffer.
  Result<void> Map(size_t data_pages);
  // Sends this event's records into `target`'s ring buffer instead of its own
  // (PERF_EVENT_IOC_SET_OUTPUT); both must be on the same CPU.
  Result<void> RedirectOutputTo(const PerfEvent& target);
  RingBuffer& ring() { return ring_; }
  bool mapped() const { return map_ != nullptr; }
  // Unmaps the ring buffer (a mapping holds the event open too).
  void Unmap();

  Result<void> Enable();
  // PERF_EVENT_IOC_SET_FILTER: a tracepoint's filter expression; the error
  // keeps the kernel's errno (EINVAL: the kernel refused the expression).
  Result<void> SetFilter(const std::string& filter);
  Result<void> Disable();

 private:
  PerfEvent(UniqueFd fd, uint64_t id) : fd_(std::move(fd)), id_(id) {}

  UniqueFd fd_;
  uint64_t id_ = 0;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  RingBuffer ring_;
};

}  // namespace sample
