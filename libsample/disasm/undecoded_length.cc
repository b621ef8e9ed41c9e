#include "libsample/disasm/undecoded_length.h"

namespace sample {
namespace {

// The architectural limit; a longer encoding raises #UD.
constexpr size_t kMaxInstructionLength = 15;

// Prefixes that may come before a VEX or EVEX prefix: segment overrides and
// the address-size override (66, F2, F3, F0 and REX before one are #UD).
bool IsAllowedPrefix(uint8_t byte) {
  switch (byte) {
    case 0x26:
    case 0x2e:
    case 0x36:
    case 0x3e:
    case 0x64:
    case 0x65:
    case 0x67:
      return true;
    default:
      return false;
  }
}

// Whether an opcode of `map` (1: 0F, 2: 0F38, 3: 0F3A, 5 and 6: EVEX's
// FP16 maps) is followed by an 8-bit immediate: all of 0F3A; in 0F the
// shifts by immediate, pshufd-likes, compares and inserts/extracts/shuffles.
bool HasImm8(unsigned map, uint8_t opcode) {
  if (map == 3) return true;
  if (map != 1) return false;
  return (opcode >= 0x70 && opcode <= 0x73) || opcode == 0xc2 || opcode == 0xc4 || opcode == 0xc5 ||
         opcode == 0xc6;
}

// Bytes taken by ModRM, SIB and displacement at `code[pos]`, or nullopt
// when cut short. `addr16`: 16-bit addressing (67 in 32-bit code).
std::optional<size_t> ModRmLength(std::span<const uint8_t> code, size_t pos, bool addr16) {
  if (pos >= code.size()) return std::nullopt;
  const uint8_t modrm = code[pos];
  const unsigned mod = modrm >> 6;
  const unsigned rm = modrm & 7;
  if (mod == 3) return 1;
  if (addr16) {
    if (mod == 0) return rm == 6 ? 3 : 1;
    return mod == 1 ? 2 : 3;
  }
  size_t length = 1;
  bool disp32_base = false;
  if (rm == 4) {  // a SIB byte follows
    if (pos + 1 >= code.size()) return std::nullopt;
    ++length;
    disp32_base = mod == 0 && (code[pos + 1] & 7) == 5;
  }
  if (mod == 1) return length + 1;
  if (mod == 2 || disp32_base || (mod == 0 && rm == 5)) return length + 4;
  return length;
}

bool IsLegacyPrefix(uint8_t byte) {
  return IsAllowedPrefix(byte) || byte == 0x66 || byte == 0xf0 || byte == 0xf2 || byte == 0xf3;
}

// 0F 01 with a register ModRM (mod 11): system instructions without
// operands (rdpkru, wrpkru, xgetbv, serialize, clac, ...), any legacy
// prefixes and a REX before them.
std::optional<size_t> SystemInstructionLength(std::span<const uint8_t> code, bool is_64bit) {
  size_t pos = 0;
  while (pos < code.size() && pos < kMaxInstructionLength && IsLegacyPrefix(code[pos])) ++pos;
  if (is_64bit && pos < code.size() && (code[pos] & 0xf0) == 0x40) ++pos;  // REX
  if (pos + 2 >= code.size() || code[pos] != 0x0f || code[pos + 1] != 0x01 ||
      code[pos + 2] < 0xc0) {
    return std::nullopt;
  }
  const size_t length = pos + 3;
  if (length > kMaxInstructionLength) return std::nullopt;
  return length;
}

std::optional<size_t> VexInstructionLength(std::span<const uint8_t> code, bool is_64bit) {
  size_t pos = 0;
  bool addr16 = false;
  while (pos < code.size() && pos < kMaxInstructionLength && IsAllowedPrefix(code[pos])) {
    if (code[pos] == 0x67 && !is_64bit) addr16 = true;
    ++pos;
  }
  // The prefix, its payload and the opcode byte.
  if (pos + 2 >= code.size()) return std::nullopt;
  const uint8_t escape = code[pos];
  const uint8_t p0 = code[pos + 1];
  // Outside 64-bit code the same bytes are LES, LDS or BOUND with a memory
  // operand, whose ModRM's top bits (here R and X, stored inverted) are not 11.
  if (!is_64bit && (p0 & 0xc0) != 0xc0) return std::nullopt;
  unsigned map = 0;
  size_t payload = 0;
  if (escape == 0xc5) {
    map = 1;
    payload = 1;
  } else if (escape == 0xc4) {
    map = p0 & 0x1f;
    payload = 2;
    if (map < 1 || map > 3) return std::nullopt;
  } else if (escape == 0x62) {
    map = p0 & 0x07;
    payload = 3;
    if (pos + 3 >= code.size() || (code[pos + 2] & 0x04) == 0) return std::nullopt;
    if (map != 1 && map != 2 && map != 3 && map != 5 && map != 6) return std::nullopt;
  } else {
    return std::nullopt;
  }
  const size_t opcode_at = pos + 1 + payload;
  if (opcode_at >= code.size()) return std::nullopt;
  const uint8_t opcode = code[opcode_at];
  size_t length = opcode_at + 1;
  // vzeroupper and vzeroall (VEX 0F 77) are the only ones without ModRM.
  if (!(escape != 0x62 && map == 1 && opcode == 0x77)) {
    const std::optional<size_t> modrm = ModRmLength(code, length, addr16);
    if (!modrm) return std::nullopt;
    length += *modrm;
  }
  if (HasImm8(map, opcode)) ++length;
  if (length > code.size() || length > kMaxInstructionLength) return std::nullopt;
  return length;
}

}  // namespace

std::optional<size_t> UndecodedLength(std::span<const uint8_t> code, bool is_64bit) {
  if (std::optional<size_t> length = VexInstructionLength(code, is_64bit)) return length;
  return SystemInstructionLength(code, is_64bit);
}

}  // namespace sample
