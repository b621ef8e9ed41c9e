// EmbeddedBinary: what a recording carries of one binary so that it reports
// the same where the binary is not (another machine, a deleted build, a
// container's file system): for the addresses the recording hit, the
// frames that name them, the functions that hold them, the CFI rows that
// unwind through them, and the machine code of the functions with samples
// enough (EmbeddingLimits).
//
// The recorder builds one per binary with samples (BuildEmbeddedBinary,
// symbol_embedding.h) from the file it read through the process that
// mapped it; formats/ encodes and decodes it (the kEmbeddedBinary chunk);
// the report's symbol sources and unwinder read it when the binary is
// missing or is not the recorded build. Plain data, sorted for binary
// search; shared read-only across threads once built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libsample/symbols/address_frames.h"
#include "libsample/symbols/x86_frame_rule.h"

namespace sample {

// A PT_LOAD segment: how file offsets map to ELF virtual addresses.
struct EmbeddedSegment {
  uint64_t offset = 0;  // p_offset
  uint64_t filesz = 0;  // p_filesz
  uint64_t vaddr = 0;   // p_vaddr
  uint64_t memsz = 0;   // p_memsz
  bool executable = false;
  bool operator==(const EmbeddedSegment&) const = default;
};

// The frames of one lookup address (a file offset; `pc - 1` for return
// addresses), exactly as FramesAtFileOffset gave them.
struct EmbeddedAddress {
  uint64_t offset = 0;
  std::vector<AddressFrame> frames;
  bool operator==(const EmbeddedAddress&) const = default;
};

// A function that holds a hit address: its ELF symbol, or for code no
// symbol names, its FDE (name "lib.so+0x...").
struct EmbeddedFunction {
  uint64_t start = 0;  // ELF virtual address
  uint64_t size = 0;
  std::string name;
  bool operator==(const EmbeddedFunction&) const = default;
};

// One row of call-frame information: the rule for [start, end) (ELF
// virtual addresses), as ReadX86FrameRule reads it; `rule.usable` false
// for rows the cached walk cannot step (expressions, signal frames).
struct CfiRow {
  uint64_t start = 0;
  uint64_t end = 0;
  X86FrameRule rule;
  bool operator==(const CfiRow& other) const;
};

// Machine code: bytes of the file at ELF virtual address `vaddr`.
struct EmbeddedCode {
  uint64_t vaddr = 0;
  std::vector<std::byte> bytes;
  bool operator==(const EmbeddedCode&) const = default;
};

struct EmbeddedBinary {
  std::string path;  // as the recording's mappings name it
  // Its identity (file_identity.h): the GNU build-id in lowercase hex,
  // else "go:..." or "elf:..."; empty in recordings made before those.
  std::string build_id;
  bool fixed_address = false;  // ET_EXEC: loaded at its own addresses (bias 0)
  std::vector<EmbeddedSegment> segments;
  std::vector<EmbeddedAddress> addresses;   // sorted by offset, unique
  std::vector<EmbeddedFunction> functions;  // sorted by start, unique
  std::vector<CfiRow> cfi;                  // sorted by start, disjoint
  std::vector<EmbeddedCode> code;           // sorted by vaddr, disjoint
  // Functions with samples whose code was left out (too few samples, or
  // over the per-function or per-recording bound: EmbeddingLimits).
  uint64_t code_omitted = 0;

  bool operator==(const EmbeddedBinary&) const = default;

  // The frames stored for lookup address `offset`, or nullptr.
  const std::vector<AddressFrame>* FramesAt(uint64_t offset) const;
  // The function holding `vaddr`, or nullptr.
  const EmbeddedFunction* FunctionAt(uint64_t vaddr) const;
  // The CFI row holding `vaddr`, or nullptr.
  const CfiRow* CfiRowAt(uint64_t vaddr) const;
  // File offset -> ELF virtual address through the segments.
  std::optional<uint64_t> FileOffsetToVaddr(uint64_t offset) const;
  // The load bias of a mapping of the file at `map_start` from file offset
  // `pgoff` (runtime address = bias + vaddr), as ElfLoadBias gives it.
  std::optional<uint64_t> LoadBias(uint64_t map_start, uint64_t pgoff) const;
  // Sorts every table and drops duplicates (builders and decoders call it).
  void Normalize();
};

// The embedded binaries of a recording, found by the path its mappings
// name and the build-id recorded for it.
class EmbeddedBinaries {
 public:
  void Add(std::shared_ptr<const EmbeddedBinary> binary);
  // The binary recorded at `path` with `build_id` (any build when empty),
  // or nullptr.
  const EmbeddedBinary* Find(std::string_view path, std::string_view build_id) const;
  size_t size() const { return binaries_.size(); }
  const std::vector<std::shared_ptr<const EmbeddedBinary>>& all() const { return binaries_; }

 private:
  std::vector<std::shared_ptr<const EmbeddedBinary>> binaries_;
  // Path -> indexes into binaries_, in the order added.
  std::unordered_map<std::string_view, std::vector<size_t>> by_path_;
};

// A JIT's /tmp/perf-PID.map as the recorder found it, whole.
struct RecordedPerfMap {
  uint32_t pid = 0;  // as the recording's records name the process
  std::string text;
  bool operator==(const RecordedPerfMap&) const = default;
};

}  // namespace sample
