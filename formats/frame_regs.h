// The three x86 frame registers that the sample columns and the register
// deltas of a sample file store apart from the other user registers (their
// perf numbers, asm/perf_regs.h, which i386 processes share), and the
// unaligned 8-byte loads and stores both use on a record's words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sample::format {

inline constexpr int kPerfRegBp = 6;
inline constexpr int kPerfRegSp = 7;
inline constexpr int kPerfRegIp = 8;
inline constexpr uint64_t kFrameRegsMask =
    uint64_t{1} << kPerfRegBp | uint64_t{1} << kPerfRegSp | uint64_t{1} << kPerfRegIp;

inline uint64_t LoadWord(const std::byte* at) {
  uint64_t value;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

inline void StoreWord(std::byte* at, uint64_t value) { std::memcpy(at, &value, sizeof(value)); }

}  // namespace sample::format
