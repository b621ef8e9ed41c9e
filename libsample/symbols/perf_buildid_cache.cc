#include "libsample/symbols/perf_buildid_cache.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "libsample/regular_file.h"

namespace sample {

std::string PerfBuildIdCacheDir() {
  if (const char* dir = std::getenv("PERF_BUILDID_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.debug";
  }
  return "";
}

Result<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes) {
  TRY_ASSIGN(auto fd, OpenRegularFile(path));
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(fmt::format("{}: read failed: {}", path, strerror(errno)), errno);
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      return Fail(fmt::format("{}: larger than {} bytes", path, max_bytes));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

Result<std::string> ReadPerfCachedFile(const std::string& cache_dir, const std::string& name,
                                       const std::string& build_id, const std::string& file,
                                       size_t max_bytes) {
  if (cache_dir.empty()) return Fail("no perf build-id cache (HOME is not set)");
  // A build-id from a file is hex: anything else must not become a path.
  if (build_id.empty() || build_id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Fail(fmt::format("'{}' is not a build-id", build_id));
  }
  return ReadBoundedFile(fmt::format("{}/{}/{}/{}", cache_dir, name, build_id, file), max_bytes);
}

std::optional<std::string> BuildIdFromNotes(const std::vector<std::byte>& notes) {
  constexpr uint32_t kNtGnuBuildId = 3;
  auto align4 = [](uint64_t n) { return (n + 3) & ~uint64_t{3}; };
  size_t pos = 0;
  while (notes.size() - pos >= 12) {
    uint32_t name_size, desc_size, type;
    std::memcpy(&name_size, notes.data() + pos, 4);
    std::memcpy(&desc_size, notes.data() + pos + 4, 4);
    std::memcpy(&type, notes.data() + pos + 8, 4);
    const uint64_t name_at = pos + 12;
    const uint64_t desc_at = name_at + align4(name_size);
    const uint64_t next = desc_at + align4(desc_size);
    if (next > notes.size()) return std::nullopt;
    if (type == kNtGnuBuildId && name_size == 4 &&
        std::memcmp(notes.data() + name_at, "GNU", 4) == 0 && desc_size > 0) {
      std::string hex;
      for (uint32_t i = 0; i < desc_size; ++i) {
        fmt::format_to(std::back_inserter(hex), "{:02x}",
                       static_cast<uint8_t>(notes[desc_at + i]));
      }
      return hex;
    }
    pos = static_cast<size_t>(next);
  }
  return std::nullopt;
}

std::optional<std::string> RunningKernelBuildId() {
  auto text = ReadBoundedFile("/sys/kernel/notes", 1 << 16);
  if (!text) return std::nullopt;
  std::vector<std::byte> bytes(text->size());
  std::memcpy(bytes.data(), text->data(), text->size());
  return BuildIdFromNotes(bytes);
}

}  // namespace sample
