// Whether a word found on a stack can be a return address, from the code
// before it: a call instruction ends there. A stack scan (CodeHits, for
// fp,leaf and dwarf copies) takes every word pointing into code as one,
// and most are not (stale slots, function pointers, data that looks like
// an address); the recorder embeds names only for those that pass (a word
// that fails may still be a signal frame's trampoline, StartsSigreturn,
// or a function's start: the caller checks those). Not kept, knowingly:
// the pc Go's asynchronous preemption and sigpanic push as a return
// address, which no call precedes.
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

// Whether the code at a candidate address (`at`: its bytes from there on)
// is a sigreturn trampoline, the return address the kernel puts under a
// signal handler (glibc's __restore_rt, which stripped libcs name by no
// symbol): the instructions libgcc's unwinder recognizes them by, x86-64
// `mov $15,%rax; syscall`, i386 `mov $173,%eax; int $0x80` (or `pop %eax;
// mov $119,%eax; int $0x80`), AArch64 `mov x8,#139; svc #0`.
bool StartsSigreturn(std::span<const std::byte> at, uint16_t machine);

}  // namespace sample
