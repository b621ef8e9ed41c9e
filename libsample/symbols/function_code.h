// FunctionCode and CodeSource: the machine code of one function of a DSO and
// what names each of its addresses, for the annotate view.
//
// A sample names a location by its file offset in the DSO; annotating needs
// the whole function holding it: where it starts and ends (its ELF symbol,
// else the FDE delimiting it), its bytes, and for each instruction the
// frames FramesAtFileOffset gives (source line, inlined calls), exactly as
// the rest of the report names that address. One CodeSource per DSO finds
// them in one of three places: the binary on disk (or its debug file),
// what the recording embedded of it when the binary is missing (the code of
// the functions with samples, the frames of the hit addresses only), or a
// process's JIT code from its jitdumps.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libsample/result.h"
#include "libsample/symbols/address_frames.h"

namespace sample {

struct EmbeddedBinary;
class JitCode;

// A file, as it was opened, whose DWARF names the source files of a
// CodeSource's code: who owns it and who else may write it decide which of
// those files a report may read (report/views/source_owners.h).
struct NamingFile {
  std::string path;
  struct stat st {};
};

struct FunctionCode {
  std::string name;  // as the symbol table names it (demangled)
  // ELF virtual addresses of [start, end) (JIT code: the pseudo-DSO's
  // offsets); the instructions' addresses as perf annotate prints them.
  uint64_t start = 0;
  uint64_t end = 0;
  // The bytes of [start, start + bytes.size()); shorter than the extent
  // only when the code at hand is (empty: none, `missing_code` says why).
  std::vector<std::byte> bytes;
  std::string missing_code;
  // The file offset of address `a` is a + file_offset_delta (mod 2^64):
  // how the samples' offsets find their instruction.
  uint64_t file_offset_delta = 0;
  bool i386 = false;  // 32-bit code (an ELFCLASS32 binary)
};

class CodeSource {
 public:
  virtual ~CodeSource() = default;
  // The function holding `file_offset` of the DSO; an error says why there
  // is none (no symbol or FDE covers it).
  virtual Result<FunctionCode> FunctionAt(uint64_t file_offset) = 0;
  // The frames of the instruction at `address` (a FunctionCode address),
  // innermost first; empty when nothing is known of it.
  virtual std::vector<AddressFrame> FramesAt(uint64_t address) = 0;
  // "name" or "name+0x28" for the function holding `address` (a branch
  // target), empty when none does.
  virtual std::string NameOf(uint64_t address) = 0;
  // Where the code comes from, for the heading ("the binary", ...).
  virtual std::string origin() const = 0;
  // The files found on this machine whose DWARF names the source files of
  // FramesAt, stat()ed on the descriptors read (a path can be swapped
  // between a check and an open): the binary, and its debug file when the
  // DWARF is read from it. Empty for a recording's own tables and JIT code.
  virtual std::vector<NamingFile> NamingFiles() const { return {}; }
};

// The binary at `binary_path` (its debug file, when not empty, for DWARF and
// symbols); `display_name` names FDE-delimited functions, as in the report.
Result<std::unique_ptr<CodeSource>> OpenBinaryCode(const std::string& binary_path,
                                                   const std::string& debug_path,
                                                   const std::string& display_name);
// What a recording embedded of a binary; `binary` must outlive the source.
std::unique_ptr<CodeSource> OpenEmbeddedCode(const EmbeddedBinary& binary);
// A process's JIT code; `code` must outlive the source. Offsets are the
// pseudo-DSO's, which are also the addresses shown.
std::unique_ptr<CodeSource> OpenJitCode(const JitCode& code);

// "name+0x28" (or "name" at offset 0), as objdump and perf annotate name a
// branch target; a C++ name without its parameter list, as the report's.
std::string NameWithOffset(const std::string& name, uint64_t offset);

}  // namespace sample
