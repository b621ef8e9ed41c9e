// The .gnu_debuglink section: how a stripped binary names its separate debug
// file (a file name, no directory) and the CRC-32 of that file's contents,
// which tells a matching debug file from a stale one where there is no
// build-id to compare.
#pragma once

#include <libelf.h>

#include <cstdint>
#include <optional>
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

// The CRC-32 of a whole file as .gnu_debuglink holds it (the IEEE 802.3 /
// zlib CRC: Crc32, libsample/crc32.h); errors name the path.
Result<uint32_t> DebugLinkFileCrc(const std::string& path);

}  // namespace sample
