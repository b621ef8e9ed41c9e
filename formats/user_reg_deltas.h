// kChunkFlagUserRegDeltas (sample_file_format.h): the three user registers
// a -g (fp,leaf) or dwarf sample carries, rewritten so that zstd finds them
// again, and back.
//
// A sample's rsp, rbp and rip are 8 bytes of near-random data each for a
// compressor: the stack pointer moves with every call depth, the frame
// pointer with it, and the user pc is a code address that the record already
// holds once (its ip, or the chain's first user entry). Stored as they are,
// they were most of what -g's leaf fix added to a file (15.9 against 7.6
// bytes a sample on qsort). Rewritten, they become small, repeating numbers:
//   - rip minus the sample's user pc (the chain's first entry after
//     PERF_CONTEXT_USER, else the sample's ip): 0 for a sample taken in
//     user mode;
//   - rbp minus rsp: the distance to the frame, constant at a call site;
//   - rsp minus the previous rsp of the same thread in the chunk (minus 0
//     for its first): 0 while a thread stays at one depth.
// Arithmetic is modulo 2^64, so every value round-trips. Only samples whose
// event asks for all three registers (x86 perf numbers, i386 processes
// included) and whose register block is present are touched; everything
// the rewrite reads to undo itself (event id, tid, ip, chain) it leaves
// alone, so decoding finds the same samples as encoding.
#pragma once

#include <cstddef>
#include <span>

#include "libsample/perf/event_table.h"

namespace sample::format {

// True when some event's samples carry the three registers: the chunk flag
// is worth setting.
bool HasUserRegDeltas(const EventTable& events);

// In place; records that do not parse go on unchanged, and so does
// everything after a malformed header (as ForEachRecord walks).
void EncodeUserRegDeltas(std::span<std::byte> records, const EventTable& events);
void DecodeUserRegDeltas(std::span<std::byte> records, const EventTable& events);

}  // namespace sample::format
