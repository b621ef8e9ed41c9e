#include "libsample/perf/perf_event.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "libsample/perf/perf_event_advice.h"

namespace sample {

Result<PerfEvent> PerfEvent::Open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                                  unsigned long flags) {
  const long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd,
                          flags | PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Fail(ExplainPerfEventOpenError(err, attr, pid, cpu), err);
  }
  UniqueFd owned(static_cast<int>(fd));
  uint64_t id = 0;
  if (ioctl(owned.get(), PERF_EVENT_IOC_ID, &id) != 0) {
    return Fail(fmt::format("PERF_EVENT_IOC_ID failed: {}", strerror(errno)));
  }
  return PerfEvent(std::move(owned), id);
}

PerfEvent::PerfEvent(PerfEvent&& other) noexcept
    : fd_(std::move(other.fd_)),
      id_(other.id_),
      map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      ring_(std::exchange(other.ring_, RingBuffer())) {}

PerfEvent& PerfEvent::operator=(PerfEvent&& other) noexcept {
  if (this != &other) {
    Unmap();
    fd_ = std::move(other.fd_);
    id_ = other.id_;
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    ring_ = std::exchange(other.ring_, RingBuffer());
  }
  return *this;
}

PerfEvent::~PerfEvent() { Unmap(); }

void PerfEvent::Unmap() {
  if (map_ != nullptr) munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
  ring_ = RingBuffer();
}

Result<void> PerfEvent::Map(size_t data_pages) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t size = (data_pages + 1) * page;
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
  if (map == MAP_FAILED) return Fail(ExplainPerfMmapError(errno, data_pages));
  Unmap();
  map_ = map;
  map_size_ = size;
  auto* meta = static_cast<perf_event_mmap_page*>(map);
  // data_offset/data_size exist since Linux 4.1; older kernels leave them 0.
  const size_t offset = meta->data_offset != 0 ? meta->data_offset : page;
  const size_t data_size = meta->data_size != 0 ? meta->data_size : data_pages * page;
  ring_ = RingBuffer(meta, static_cast<std::byte*>(map) + offset, data_size);
  return {};
}

Result<void> PerfEvent::RedirectOutputTo(const PerfEvent& target) {
  if (ioctl(fd_.get(), PERF_EVENT_IOC_SET_OUTPUT, target.fd()) != 0) {
    return Fail(fmt::format("PERF_EVENT_IOC_SET_OUTPUT failed: {}", strerror(errno)));
  }
  return {};
}

Result<void> PerfEvent::Enable() {
  if (ioctl(fd_.get(), PERF_EVENT_IOC_ENABLE, 0) != 0) {
    return Fail(fmt::format("PERF_EVENT_IOC_ENABLE failed: {}", strerror(errno)));
  }
  return {};
}

Result<void> PerfEvent::SetFilter(const std::string& filter) {
  if (ioctl(fd_.get(), PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0) {
    const int err = errno;
    return Fail(fmt::format("PERF_EVENT_IOC_SET_FILTER failed: {}", strerror(err)), err);
  }
  return {};
}

Result<void> PerfEvent::Disable() {
  if (ioctl(fd_.get(), PERF_EVENT_IOC_DISABLE, 0) != 0) {
    return Fail(fmt::format("PERF_EVENT_IOC_DISABLE failed: {}", strerror(errno)));
  }
  return {};
}

}  // namespace sample
