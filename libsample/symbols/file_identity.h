// A binary's identity: what tells the file a recording saw from another
// file at the same path (a rebuild, another program copied over it, a
// container's file bind-mounted where the host has its own).
//
// The recorder stores it for every binary it saw (kBuildIds); a report
// uses a file it finds only if the file's identity is the recorded one,
// else the recording's embedded tables name its code. In order:
//   "HEX"              the GNU build-id (NT_GNU_BUILD_ID), lowercase hex:
//                      the one perf, debug directories and debuginfod know;
//   "go:TEXT"          else the Go linker's build ID note (every Go
//                      binary has one and, by default, no GNU build-id),
//                      as `go tool buildid` prints it;
//   "elf:SIZE-CRC"     else the file's size and the CRC-32 of its bytes
//                      (files over 64 MiB: of their first and last 32 MiB),
//                      both in hex.
// Only the first kind names debug files or asks debuginfod.
#pragma once

#include <string>
#include <string_view>

#include "libsample/result.h"
#include "libsample/symbols/elf_file.h"

namespace sample {

// Whether `identity` is a GNU build-id (the first kind above): hex digits
// only. False for an empty one.
bool IsGnuBuildId(std::string_view identity);

// The identity of the ELF file open as `file`, whose GNU build-id (maybe
// empty) is `build_id`; the hash kind reads the file through its fd.
std::string FileIdentity(const ElfFile& file, const std::string& build_id);
// The same for a path; an error when it cannot be opened or is not ELF.
Result<std::string> ReadFileIdentity(const std::string& path);

}  // namespace sample
