#include "libsample/symbols/vdso_image.h"

#include <elf.h>
#include <sys/auxv.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "libsample/symbols/recorded_binary.h"

namespace sample {
namespace {

// The end of the mapping that starts at `start`, from /proc/self/maps
// ("7ffd1c3f0000-7ffd1c3f2000 r-xp 00000000 00:00 0   [vdso]").
Result<uintptr_t> MappingEnd(uintptr_t start) {
  std::ifstream maps("/proc/self/maps");
  if (!maps) return Fail("/proc/self/maps: cannot open");
  for (std::string line; std::getline(maps, line);) {
    uintptr_t from = 0;
    uintptr_t to = 0;
    const char* end = line.data() + line.size();
    auto [dash, ec] = std::from_chars(line.data(), end, from, 16);
    if (ec != std::errc() || from != start || dash == end || *dash != '-') continue;
    auto [rest, ec2] = std::from_chars(dash + 1, end, to, 16);
    if (ec2 != std::errc() || to <= from) continue;
    if (std::string_view(rest, end - rest).find(kVdsoPath) == std::string_view::npos) {
      return Fail(fmt::format("/proc/self/maps: the mapping at {:#x} is not [vdso]", start));
    }
    return to;
  }
  return Fail(fmt::format("/proc/self/maps: no mapping starts at the vDSO's {:#x}", start));
}

}  // namespace

Result<std::vector<std::byte>> ReadOwnVdsoImage() {
  const uintptr_t start = getauxval(AT_SYSINFO_EHDR);
  if (start == 0) return Fail("this process has no vDSO (AT_SYSINFO_EHDR is 0)");
  TRY_ASSIGN(auto end, MappingEnd(start));
  const auto* image = reinterpret_cast<const std::byte*>(start);
  const size_t size = end - start;
  if (size < EI_NIDENT || std::memcmp(image, ELFMAG, SELFMAG) != 0) {
    return Fail(fmt::format("the vDSO at {:#x} ({} bytes) is not an ELF image", start, size));
  }
  return std::vector<std::byte>(image, image + size);
}

}  // namespace sample
