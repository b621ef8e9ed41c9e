#include "libsample/symbols/file_identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "libsample/crc32.h"
#include "libsample/symbols/elf_build_id.h"

namespace sample {
namespace {

constexpr uint64_t kWholeFileLimit = uint64_t{64} << 20;
constexpr uint64_t kHashedEnd = uint64_t{32} << 20;

// CRC-32 of `length` bytes of `fd` from `offset`; false on a short read.
bool CrcOfRange(int fd, uint64_t offset, uint64_t length, uint32_t* crc) {
  std::vector<std::byte> buffer(std::min<uint64_t>(length, uint64_t{1} << 20));
  while (length > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(length, buffer.size()));
    const ssize_t got = pread(fd, buffer.data(), want, static_cast<off_t>(offset));
    if (got <= 0) return false;
    *crc = Crc32(std::span(buffer.data(), static_cast<size_t>(got)), *crc);
    offset += static_cast<uint64_t>(got);
    length -= static_cast<uint64_t>(got);
  }
  return true;
}

// "elf:SIZE-CRC"; empty when the file cannot be read.
std::string HashIdentity(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return "";
  const auto size = static_cast<uint64_t>(st.st_size);
  uint32_t crc = 0;
  const bool read = size <= kWholeFileLimit
                        ? CrcOfRange(fd, 0, size, &crc)
                        : CrcOfRange(fd, 0, kHashedEnd, &crc) &&
                              CrcOfRange(fd, size - kHashedEnd, kHashedEnd, &crc);
  return read ? fmt::format("elf:{:x}-{:08x}", size, crc) : "";
}

// Go's note as `go tool buildid` prints it: its text (ReadGoBuildId gives
// hex), with any byte outside printable ASCII left in hex.
std::string GoBuildIdText(const std::string& hex) {
  std::string text;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    unsigned byte = 0;
    std::from_chars(hex.data() + i, hex.data() + i + 2, byte, 16);
    if (byte > ' ' && byte < 0x7f) {
      text += static_cast<char>(byte);
    } else {
      text += fmt::format("\\x{:02x}", byte);
    }
  }
  return text;
}

}  // namespace

bool IsGnuBuildId(std::string_view identity) {
  return !identity.empty() && std::all_of(identity.begin(), identity.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

std::string FileIdentity(const ElfFile& file, const std::string& build_id) {
  if (!build_id.empty()) return build_id;
  if (std::string go = ReadGoBuildId(file); !go.empty()) return "go:" + GoBuildIdText(go);
  return HashIdentity(file.fd());
}

Result<std::string> ReadFileIdentity(const std::string& path) {
  TRY_ASSIGN(auto file, ElfFile::Open(path));
  return FileIdentity(file, ReadElfBuildId(file));
}

}  // namespace sample
