// CRC-32 (IEEE 802.3 polynomial, the zlib/PNG variant) for chunk checksums.
// Incremental: pass the previous result as `crc` to continue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sample::format {

uint32_t Crc32(std::span<const std::byte> data, uint32_t crc = 0);

}  // namespace sample::format
