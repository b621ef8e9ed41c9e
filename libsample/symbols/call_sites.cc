#include "libsample/symbols/call_sites.h"

#include <elf.h>

#include <algorithm>
#include <initializer_list>

namespace sample {
namespace {

// The length of an FF /2 or /3 instruction from its ModRM byte on (the
// opcode counted), given the bytes after the opcode; 0 if `modrm` is no
// call (another /reg, or a register far call, which does not exist).
size_t IndirectCallLength(std::span<const uint8_t> after_opcode) {
  if (after_opcode.empty()) return 0;
  const uint8_t modrm = after_opcode[0];
  const unsigned mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
  if (reg != 2 && reg != 3) return 0;
  if (mod == 3) return reg == 2 ? 2 : 0;  // call *%reg; a far call needs memory
  size_t length = 2;                      // opcode and ModRM
  bool disp32 = mod == 2 || (mod == 0 && rm == 5);  // rm 5 with mod 0: RIP-relative (absolute on i386)
  if (rm == 4) {                                     // a SIB byte follows
    if (after_opcode.size() < 2) return 0;
    ++length;
    if (mod == 0 && (after_opcode[1] & 7) == 5) disp32 = true;  // no base: disp32
  }
  if (mod == 1) length += 1;
  if (disp32) length += 4;
  return length;
}

bool X86EndsAfterCall(std::span<const uint8_t> b) {
  const size_t n = b.size();
  if (n >= 5 && b[n - 5] == 0xe8) return true;
  // FF /2 is 2 to 7 bytes long: each place an opcode can be, ending here.
  for (size_t length = 2; length <= std::min<size_t>(7, n); ++length) {
    if (b[n - length] == 0xff && IndirectCallLength(b.subspan(n - length + 1)) == length) {
      return true;
    }
  }
  return false;
}

bool Aarch64EndsAfterCall(std::span<const uint8_t> b) {
  if (b.size() < 4) return false;
  const size_t n = b.size();
  const uint32_t insn = uint32_t{b[n - 4]} | uint32_t{b[n - 3]} << 8 | uint32_t{b[n - 2]} << 16 |
                        uint32_t{b[n - 1]} << 24;
  const bool bl = (insn & 0xfc000000) == 0x94000000;
  const bool blr = (insn & 0xfffffc1f) == 0xd63f0000;
  // BLRAA, BLRAAZ, BLRAB, BLRABZ (pointer authentication).
  const bool blra = (insn & 0xfefff800) == 0xd63f0800;
  return bl || blr || blra;
}

}  // namespace

bool EndsAfterCall(std::span<const std::byte> before, uint16_t machine) {
  const size_t keep = std::min<size_t>(before.size(), 8);
  const std::span<const uint8_t> b(reinterpret_cast<const uint8_t*>(before.data()) + before.size() - keep,
                                   keep);
  switch (machine) {
    case EM_X86_64:
    case EM_386:
      return X86EndsAfterCall(b);
    case EM_AARCH64:
      return Aarch64EndsAfterCall(b);
    default:
      return true;
  }
}

bool StartsSigreturn(std::span<const std::byte> at, uint16_t machine) {
  const auto starts_with = [at](std::initializer_list<uint8_t> code) {
    return at.size() >= code.size() &&
           std::equal(code.begin(), code.end(), reinterpret_cast<const uint8_t*>(at.data()));
  };
  switch (machine) {
    case EM_X86_64:
      return starts_with({0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05});
    case EM_386:
      return starts_with({0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80}) ||
             starts_with({0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80});
    case EM_AARCH64:
      return starts_with({0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4});
    default:
      return false;
  }
}

}  // namespace sample
