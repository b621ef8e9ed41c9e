#include "record/control/control_channel.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdint>

#include <fmt/format.h>

namespace sample::record {

Result<ControlChannel> ControlChannel::Create() {
  UniqueFd wake(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake.valid()) return Fail(fmt::format("eventfd for the recorder's control: {}", strerror(errno)));
  return ControlChannel(std::move(wake));
}

void ControlChannel::Post(ControlCommand command) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back(std::move(command));
  }
  const uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof(one));
}

std::vector<ControlCommand> ControlChannel::Take() {
  uint64_t count = 0;
  (void)!read(wake_.get(), &count, sizeof(count));
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(pending_, {});
}

}  // namespace sample::record
