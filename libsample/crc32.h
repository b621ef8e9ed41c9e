// CRC-32 (IEEE 802.3 polynomial, the zlib/PNG variant): chunk checksums,
// cache files and .gnu_debuglink. Incremental: pass the previous result as `crc` to
// continue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sample {

uint32_t Crc32(std::span<const std::byte> data, uint32_t crc = 0);

}  // namespace sample
