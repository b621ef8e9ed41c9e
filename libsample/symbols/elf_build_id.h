// The build-id notes of an ELF file: the GNU build-id (NT_GNU_BUILD_ID)
// that names a binary in perf's cache, debug directories and debuginfod,
// and the Go linker's own note. Read from the note sections, or from the
// PT_NOTE segments of a file without section headers.
#pragma once

#include <string>

#include "libsample/result.h"
#include "libsample/symbols/elf_file.h"

namespace sample {

// The build-id of an ELF file as lowercase hex, reading only the notes. An
// error if the file cannot be opened or is not ELF; an empty string if the
// file has no build-id note.
Result<std::string> ReadElfBuildId(const std::string& path);
// The same for a file already open.
std::string ReadElfBuildId(const ElfFile& file);
// A Go binary's build ID note (its linker writes no NT_GNU_BUILD_ID) as
// lowercase hex of its text; empty if there is none.
std::string ReadGoBuildId(const ElfFile& file);

}  // namespace sample
