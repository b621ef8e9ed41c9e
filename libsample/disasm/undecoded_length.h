// UndecodedLength: how many bytes an instruction Capstone cannot decode
// takes, for the few encodings whose length follows from a few bytes.
//
// Capstone 4.0.2 does not know the AVX-512BW/DQ mask instructions (kmovd,
// kortestd, vpcmpeqb into a mask register, vptestmb, ...), which glibc's
// *-evex string functions (strlen, memchr, strcmp on any AVX-512 machine)
// are full of, nor some newer 0F 01 system instructions (rdpkru, wrpkru).
// Taken one (bad) byte at a time, each would put the bytes after it out of
// step: the next few "instructions" would be garbage at addresses where none
// start, and samples would land between them. The lengths of VEX and EVEX
// encodings follow fixed rules (the prefix, one opcode byte, ModRM, SIB,
// displacement, an 8-bit immediate in the maps that have one), and 0F 01
// with a register ModRM is always three bytes, so the Disassembler covers
// such an instruction with one (bad) of the right length and stays in step.
// Nothing else is decoded here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace sample {

// The length of the VEX (C4, C5), EVEX (62) or 0F 01 register-form
// instruction at the start of `code`, prefixes included; nullopt when `code`
// does not start with one, or it is cut short, or longer than 15 bytes.
// `is_64bit`: 64-bit code (in 32-bit code C4, C5 and 62 are LES, LDS and
// BOUND unless the next byte's top two bits are set).
std::optional<size_t> UndecodedLength(std::span<const uint8_t> code, bool is_64bit);

}  // namespace sample
