#include "libsample/perf/capabilities.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sample {
namespace {

// Older uapi headers lack it; the number is fixed by the kernel ABI.
constexpr int kCapPerfmon = 38;

}  // namespace

bool HasEffectiveCapability(int capability) {
  if (capability < 0 || capability >= 64) return false;
  // capget(2) directly: glibc has no wrapper and libcap is not worth a
  // dependency for one bit. Version 3 fills two 32-bit words.
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  const auto word = static_cast<size_t>(capability / 32);
  return (data[word].effective >> (capability % 32)) & 1u;
}

bool PerfmonCapable() {
  return HasEffectiveCapability(kCapPerfmon) || HasEffectiveCapability(CAP_SYS_ADMIN);
}

}  // namespace sample
