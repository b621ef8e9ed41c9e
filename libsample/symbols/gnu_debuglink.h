// The .gnu_debuglink section: how a stripped binary names its separate debug
// file (a file name, no directory) and the CRC-32 of that file's contents,
// which tells a matching debug file from a stale one where there is no
// build-id to compare.
#pragma once

#include <libelf.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "libsample/result.h"

namespace sample {

struct GnuDebugLink {
  std::string file_name;  // e.g. "libfoo.so.debug"
  uint32_t crc = 0;
};

// The link of an open ELF file; nullopt if it has no .gnu_debuglink or the
// section is malformed (no NUL-terminated name, no CRC after the padding).
std::optional<GnuDebugLink> ReadGnuDebugLink(Elf* elf);

// CRC-32 as .gnu_debuglink uses it (the IEEE 802.3 / zlib CRC). `crc` is the
// value so far, so a file can be summed in pieces.
uint32_t DebugLinkCrc(std::span<const std::byte> bytes, uint32_t crc = 0);

// DebugLinkCrc of a whole file; errors name the path.
Result<uint32_t> DebugLinkFileCrc(const std::string& path);

}  // namespace sample
