// GoPclntab: the function table a Go binary keeps for its own tracebacks
// (.gopclntab), read for binaries that have no other symbols. `go build
// -ldflags=-s` strips .symtab and the DWARF, but the runtime needs this
// table, so every Go binary has it: each function's entry, end and name,
// and per function the pc-value tables mapping its pcs to source files
// and lines, and since Go 1.18 per function the tree of the calls the
// compiler inlined into it (its FUNCDATA_InlTree).
//
// The inline trees lie outside the section, in go:func.* (.rodata), where
// each function's funcdata offsets count from; the runtime's module data
// (moduledata, in .noptrdata) holds its address. FindGoFunc finds it and
// AttachFuncData keeps a copy of those bytes. Older releases' funcdata are
// absolute pointers and are not read: their inlined calls show as the
// function holding them.
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
  // An inlined call or the function itself at a pc.
  struct Frame {
    std::string_view function;
    std::optional<Line> line;
  };
  // One step of a pc-value table: `value` holds for pcs below `end`.
  struct Step {
    uint64_t end = 0;
    int32_t value = -1;
  };
  // A function's pc-value tables decoded (TablesOf), for the lookups of
  // many pcs in one function.
  struct FunctionTables {
    const Function* function = nullptr;
    std::vector<Step> file, line, inline_index;
    std::optional<uint64_t> inline_tree;  // its offset in the funcdata bytes
  };
  // What FramesAt depends on at a pc: two pcs of one function with equal
  // keys have equal frames.
  struct PcKey {
    int32_t file = -1;
    int32_t line = -1;
    int32_t inline_index = -1;
    bool operator==(const PcKey&) const = default;
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

  FunctionTables TablesOf(const Function& function) const;
  // The frames at `pc` in tables.function, innermost first: the calls
  // inlined there (when the inline trees are attached), then the function.
  std::vector<Frame> FramesAt(const FunctionTables& tables, uint64_t pc) const;
  PcKey KeyAt(const FunctionTables& tables, uint64_t pc) const;

  // Go 1.18 and later: moduledata.gofunc, read from the module data found
  // in `data` (a writable data section's bytes) by its first fields: the
  // addresses of this table (at `table_address`) and its parts. nullopt
  // when `data` holds no module data of this table.
  std::optional<uint64_t> FindGoFunc(std::span<const std::byte> data, uint64_t table_address) const;
  // Keeps a copy of `bytes`, the memory at `gofunc` (to the end of its
  // section), where the inline trees are. Before the table is shared.
  void AttachFuncData(std::span<const std::byte> bytes);
  bool has_inline_trees() const { return !funcdata_.empty(); }

 private:
  enum class Version { k12, k116, k118, k120 };

  std::optional<std::string_view> FileName(const Function& function, int32_t index) const;
  std::optional<uint64_t> Word(uint64_t offset) const;  // pointer-sized
  std::optional<uint32_t> U32(uint64_t offset) const;
  std::optional<std::string_view> CString(uint64_t offset) const;
  // Parses the function table; false when the header is unreadable.
  bool ReadFunctions(uint64_t text_start);
  std::vector<Step> Decode(uint32_t offset, const Function& function) const;
  std::optional<Line> LineIn(const FunctionTables& tables, uint64_t pc) const;
  // The offset in a _func of its pcdata `index`, or with `funcdata` of its
  // funcdata `index`; nullopt when it has none such (Go 1.18+ only).
  std::optional<uint64_t> TrailerField(const Function& function, uint32_t index,
                                       bool funcdata) const;

  std::string bytes_;
  std::string funcdata_;  // go:func.* on (AttachFuncData)
  Version version_ = Version::k118;
  uint32_t ptr_size_ = 8;
  uint32_t quantum_ = 1;  // minLC: pc deltas are in its units
  uint64_t nfunc_ = 0;
  uint64_t funcnames_ = 0, cutab_ = 0, filetab_ = 0, pctab_ = 0, pcln_ = 0;
  std::vector<Function> functions_;
};

}  // namespace sample
