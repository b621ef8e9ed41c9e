// GoPclntab: the function table a Go binary keeps for its own tracebacks
// (.gopclntab), read for binaries that have no other symbols. `go build
// -ldflags=-s` strips .symtab and the DWARF, but the runtime needs this
// table, so every Go binary has it: each function's entry, end and name,
// and per function the pc-value tables mapping its pcs to source files
// and lines.
//
// Layouts read (the header's magic tells them apart): Go 1.2-1.15
// (0xfffffffb), 1.16-1.17 (0xfffffffa), 1.18-1.19 (0xfffffff0) and 1.20
// and later (0xfffffff1), little-endian with 4- or 8-byte pointers. The
// table is untrusted input: every offset is checked against the bytes;
// a function whose entry or name lies outside them is left out.
//
// Owns a copy of the section's bytes; function names are views into it.
// Immutable once parsed, so it may be shared across threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

class GoPclntab {
 public:
  struct Function {
    uint64_t start = 0;  // entry pc (an ELF virtual address)
    uint64_t end = 0;    // the next function's entry, or the table's end
    std::string_view name;
    uint32_t func_offset = 0;  // its _func record, from the function table
  };
  struct Line {
    std::string_view file;
    uint32_t line = 0;
  };

  // Parses the section's `bytes`. `text_start`: the address of .text,
  // where Go 1.18+ tables measure entries from when their own field holds
  // 0 (a PIE, whose loader relocates it). An error names what is wrong.
  static Result<GoPclntab> Parse(std::span<const std::byte> bytes, uint64_t text_start);

  // Sorted by start; ranges do not overlap.
  const std::vector<Function>& functions() const { return functions_; }
  // The function whose range holds `pc`, or nullptr.
  const Function* FunctionAt(uint64_t pc) const;
  // The file and line of `pc` in `function` (one of functions()); nullopt
  // when its tables do not say.
  std::optional<Line> LineAt(const Function& function, uint64_t pc) const;
  // The section's bytes (what the names view).
  const std::string& bytes() const { return bytes_; }

 private:
  enum class Version { k12, k116, k118, k120 };

  // The value of the pc-value table at `offset` (of the pc tables) for
  // `pc` in a function entered at `entry`.
  std::optional<int32_t> PcValue(uint32_t offset, uint64_t entry, uint64_t pc) const;
  std::optional<std::string_view> FileName(const Function& function, int32_t index) const;
  std::optional<uint64_t> Word(uint64_t offset) const;  // pointer-sized
  std::optional<uint32_t> U32(uint64_t offset) const;
  std::optional<std::string_view> CString(uint64_t offset) const;
  // Parses the function table; false when the header is unreadable.
  bool ReadFunctions(uint64_t text_start);

  std::string bytes_;
  Version version_ = Version::k118;
  uint32_t ptr_size_ = 8;
  uint32_t quantum_ = 1;  // minLC: pc deltas are in its units
  uint64_t nfunc_ = 0;
  uint64_t funcnames_ = 0, cutab_ = 0, filetab_ = 0, pctab_ = 0, pcln_ = 0;
  std::vector<Function> functions_;
};

}  // namespace sample
