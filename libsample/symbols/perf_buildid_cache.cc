#include "libsample/symbols/perf_buildid_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
  // Read in place: into one allocation when the file says its size (not
  // /proc's), one byte more to see the end. Appending 64 KiB pieces to a
  // growing string touched three times the pages of a 5.4 MB kallsyms
  // copy: a third of a perf.data annotate's page faults.
  struct stat st {};
  const bool sized = fstat(fd.get(), &st) == 0 && st.st_size > 0;
  const size_t limit = max_bytes == SIZE_MAX ? max_bytes : max_bytes + 1;
  std::string text(std::min(sized ? static_cast<size_t>(st.st_size) + 1 : size_t{65536}, limit),
                   '\0');
  size_t used = 0;
  for (;;) {
    // Full and still under the limit (the check below): room for more.
    if (used == text.size()) text.resize(std::min(std::max(used, size_t{1}) * 2, limit));
    const ssize_t n = read(fd.get(), text.data() + used, text.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(fmt::format("{}: read failed: {}", path, strerror(errno)), errno);
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
    if (used > max_bytes) return Fail(fmt::format("{}: larger than {} bytes", path, max_bytes));
  }
  text.resize(used);
  return text;
}

namespace {

Result<std::string> PerfCachedFilePath(const std::string& cache_dir, const std::string& name,
                                       const std::string& build_id, const std::string& file) {
  if (cache_dir.empty()) return Fail("no perf build-id cache (HOME is not set)");
  // A build-id from a file is hex: anything else must not become a path.
  if (build_id.empty() || build_id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Fail(fmt::format("'{}' is not a build-id", build_id));
  }
  return fmt::format("{}/{}/{}/{}", cache_dir, name, build_id, file);
}

}  // namespace

Result<std::string> ReadPerfCachedFile(const std::string& cache_dir, const std::string& name,
                                       const std::string& build_id, const std::string& file,
                                       size_t max_bytes) {
  TRY_ASSIGN(const std::string path, PerfCachedFilePath(cache_dir, name, build_id, file));
  return ReadBoundedFile(path, max_bytes);
}

Result<MappedFile> MapPerfCachedFile(const std::string& cache_dir, const std::string& name,
                                     const std::string& build_id, const std::string& file,
                                     size_t max_bytes) {
  TRY_ASSIGN(const std::string path, PerfCachedFilePath(cache_dir, name, build_id, file));
  TRY_ASSIGN(MappedFile mapped, MappedFile::Open(path));
  if (mapped.bytes().size() > max_bytes) {
    return Fail(fmt::format("{}: larger than {} bytes", path, max_bytes));
  }
  return mapped;
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
