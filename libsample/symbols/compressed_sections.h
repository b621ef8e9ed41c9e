// The zlib-bomb check every ELF file we did not write passes before libdw's
// DWARF reader sees it.
//
// dwarf_begin_elf (elfutils 0.188) inflates every compressed DWARF section
// it is shown when it opens a file, into a buffer of the size the
// section's header claims: SHF_COMPRESSED sections (Elf*_Chdr::ch_size)
// and GNU's .zdebug_* ("ZLIB", then the size as 8 big-endian bytes). A
// 1 MB file can claim 1 GB that way, in a separate debug file or in the
// binary itself (-gz). So the claims are judged first, from the headers
// alone, on the very Elf* (or fd) libdw is then given: judging a path and
// handing libdw the path would let a rename in between pass a bomb.
//
// A file whose sections claim more than kMaxInflateRatio times their
// compressed bytes (plus kInflateSlackBytes) is a bomb: the debug files of
// this machine's /usr/lib/debug, 273 of them, inflate 1.7x to 25x overall,
// 83x for one small section; zlib itself cannot pass ~1032x. A compressed
// section whose header cannot be read counts as a bomb too: libdw might
// still find a size in it, and no honest file has one.
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "libsample/result.h"

namespace sample {

inline constexpr uint64_t kMaxInflateRatio = 128;
// Small sections inflate worse than large ones: what any file may claim.
inline constexpr uint64_t kInflateSlackBytes = uint64_t{1} << 20;
// An inflated copy larger than this is not cached (inflated_debug.h).
inline constexpr uint64_t kMaxInflatedDebugBytes = uint64_t{512} << 20;

// The compressed sections of a file: their bytes on disk and the bytes
// their headers say they inflate to (each sum saturating at 2^64 - 1).
struct CompressedSections {
  uint64_t compressed = 0;
  uint64_t inflated = 0;
  bool any = false;               // at least one compressed section
  bool unreadable = false;        // a section or compression header libelf cannot read
  size_t unreadable_section = 0;  // the first such section's index
};

// Counts SHF_COMPRESSED sections and GNU-compressed .zdebug* ones
// (SHT_NOBITS placeholders hold nothing and are skipped). `freeze`: `elf`
// is a writable private mapping (ELF_C_READ_MMAP_PRIVATE), whose header
// pages are then copied before they are read, so that a rewrite of the
// file in place after the judgement cannot change what libdw reads.
CompressedSections CountCompressedSections(Elf* elf, bool freeze = false);

enum class InflateVerdict {
  kNone,      // nothing compressed
  kCache,     // may be inflated into a copy of at most kMaxInflatedDebugBytes
  kTooLarge,  // honest, but its copy would be larger than that
  kBomb,      // claims more than any honest file: read no DWARF from it
};

// What a file of `file_size` bytes whose sections are `c` is. Overflow-free
// for any values (a sparse file may claim sizes near 2^64).
InflateVerdict JudgeCompression(const CompressedSections& c, uint64_t file_size);

// Fails, naming `path`, the sections' claimed and compressed bytes, when
// `elf`, a file of `file_size` bytes, is a bomb; `freeze` as above.
Result<void> CheckCompressedSections(Elf* elf, uint64_t file_size, const std::string& path,
                                     bool freeze = false);

// The same for the file open as `fd` (its own libelf handle, released
// before returning): for files libdw opens from an fd of ours (libdwfl).
Result<void> CheckCompressedSectionsOfFd(int fd, const std::string& path);

}  // namespace sample
