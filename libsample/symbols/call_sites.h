// Whether a word found on a stack can be a return address, from the code
// before it: a call instruction ends there. A stack scan (CodeHits, for
// fp,leaf and dwarf copies) takes every word pointing into code as one,
// and most are not (stale slots, function pointers, data that looks like
// an address); the recorder embeds names only for those that pass (a word
// that fails may still be a function start: the caller checks that).
//
// x86 (64- and 32-bit): `call rel32` (E8) or `call r/m` (FF /2, and the
// far FF /3) whose encoded length ends exactly at the address, whatever
// its prefixes. AArch64: BL or BLR, BLRAA and the like, in the 4 bytes
// before. Any other machine: every word passes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sample {

// `before`: the code bytes that end at the candidate address (up to 8 are
// used; fewer when the address is near the start of its segment).
// `machine`: the ELF e_machine of the binary.
bool EndsAfterCall(std::span<const std::byte> before, uint16_t machine);

}  // namespace sample
