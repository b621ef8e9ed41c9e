// CountBits: the bits set in a 64-bit mask.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sample {

// The bits set in `mask`, inline: std::popcount is a libgcc call on
// baseline x86-64 (no popcnt instruction), and samples are parsed by the
// million.
constexpr size_t CountBits(uint64_t mask) {
  mask -= (mask >> 1) & 0x5555555555555555;
  mask = (mask & 0x3333333333333333) + ((mask >> 2) & 0x3333333333333333);
  mask = (mask + (mask >> 4)) & 0x0f0f0f0f0f0f0f0f;
  return static_cast<size_t>((mask * 0x0101010101010101) >> 56);
}

}  // namespace sample
