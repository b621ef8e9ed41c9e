// DwarfUnitIndex: what one DWARF compilation unit says about its code, read
// once and kept in a form that answers each address by binary search.
//
// libdw's own per-address answers (dwarf_getscopes, dwarf_getsrc_die) walk
// the unit's DIE tree or line table again for every address; a report asks
// for thousands of addresses in the same few units. So on a unit's first use
// Build() copies its line table and lists its functions (DW_TAG_subprogram
// with code) without descending into them. A function's body (its inlined
// calls, DW_TAG_inlined_subroutine, nested in lexical blocks) is walked on
// the first lookup inside it: big C++ units hold thousands of functions of
// which a profile samples a few, and walking every body was most of the cost
// (bench/symbolize_bench: 164 sparse addresses in a -O2 C++ test binary
// went from 283 ms to 112 ms; what is left is reading line tables and
// stepping over each unit's top-level DIEs). Nested scope ranges are
// flattened into disjoint segments, each naming its innermost scope.
// Function names are resolved (and demangled) on first use only.
//
// Holds Dwarf_Die values and file tables that point into the Dwarf it was
// built from, which must outlive it. Not thread-safe (everything past Build
// is filled lazily, and libdw is not thread-safe).
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "libsample/symbols/dwarf_names.h"

namespace sample {

// Whether a DWARF range starting at `low_pc` describes code the linker
// discarded: its DWARF stays behind with the address 0 or the all-ones
// tombstone, and would overlap real code. Units, functions and the
// symbolizer's unit ranges all skip such ranges.
inline bool IsDiscardedRange(uint64_t low_pc) { return low_pc == 0 || low_pc == ~uint64_t{0}; }

class DwarfUnitIndex {
 public:
  // One function or inlined call covering some addresses.
  struct Scope {
    Dwarf_Die die{};         // DW_TAG_subprogram or DW_TAG_inlined_subroutine
    int32_t parent = -1;     // index of the enclosing scope; -1: outermost
    bool inlined = false;    // DW_TAG_inlined_subroutine
    uint32_t call_file = 0;  // for an inlined scope, where its parent called
    uint32_t call_line = 0;  // it (DW_AT_call_file / DW_AT_call_line)
  };

  struct SourceLine {
    const std::string* file = nullptr;  // absolute if the unit says where it was compiled
    uint32_t line = 0;
  };

  // Reads `cu`, a DW_TAG_compile_unit DIE. A unit without functions or line
  // table gives an index that answers nothing; malformed entries are skipped.
  static DwarfUnitIndex Build(Dwarf_Die cu);

  // The innermost scope containing `vaddr`, or -1. Walks the body of the
  // function containing `vaddr` on first use.
  int32_t InnermostScope(uint64_t vaddr);
  const Scope& scope(int32_t index) const { return scopes_[static_cast<size_t>(index)]; }

  // The line-table row for `vaddr`: the last row at or before it, unless that
  // row ends a sequence. nullopt if no row covers `vaddr`.
  std::optional<SourceLine> LineAt(uint64_t vaddr) const;
  // The index of the line row LineAt reads for `vaddr`; -1 when none.
  int64_t LineRowAt(uint64_t vaddr) const;

  // A file-table entry (DW_AT_call_file numbering), or nullptr.
  const std::string* FileName(uint32_t index);

  // The name of a scope's function (DwarfNames: the demangled linkage name,
  // else DW_AT_name qualified by its scopes); empty if DWARF names nothing.
  // Cached.
  const std::string& ScopeName(int32_t index);

  size_t function_count() const { return functions_.size(); }
  // Scopes (functions and inlined calls) of the function bodies walked so far.
  size_t scope_count() const { return scopes_.size(); }

 private:
  struct Segment {
    uint64_t lo = 0;
    uint64_t hi = 0;  // exclusive
    int32_t scope = -1;
  };
  struct LineRow {
    uint64_t addr = 0;
    uint32_t file = 0;  // index into paths_
    uint32_t line = 0;
    bool end_sequence = false;
  };
  // A scope's address range before flattening.
  struct Interval {
    uint64_t lo = 0;
    uint64_t hi = 0;
    uint32_t depth = 0;
    int32_t scope = -1;
  };

  // A function of the unit; its body is indexed on first use.
  struct Function {
    Dwarf_Die die{};
    int32_t scope = -1;             // its Scope, once indexed
    std::vector<Segment> segments;  // its body's scopes, once indexed
  };

  DwarfUnitIndex() = default;
  // Lists the functions below `parent_die`, not descending into them.
  void CollectFunctions(Dwarf_Die* parent_die, uint32_t level, std::vector<Interval>* intervals);
  void IndexFunction(Function* function);
  static void AddRanges(Dwarf_Die* die, uint32_t depth, int32_t scope,
                        std::vector<Interval>* intervals);
  // Adds the scopes below `parent_die`; `scope_depth` is the nesting depth
  // of `parent_scope` (0 for none), `level` the DIE depth.
  void Walk(Dwarf_Die* parent_die, int32_t parent_scope, uint32_t scope_depth, uint32_t level,
            std::vector<Interval>* intervals);
  static std::vector<Segment> Flatten(std::vector<Interval> intervals);
  // The scope of the segment containing `vaddr`, or -1.
  static int32_t FindSegment(const std::vector<Segment>& segments, uint64_t vaddr);
  void ReadLines(Dwarf_Die* cu);
  // The index in paths_ of a file name from libdw, made absolute.
  uint32_t InternPath(const char* name);

  std::vector<Scope> scopes_;
  std::vector<std::optional<std::string>> names_;  // by scope, filled on demand
  DwarfNames names_of_{-1};
  std::vector<Function> functions_;
  std::vector<Segment> function_segments_;  // scope = index in functions_
  std::vector<LineRow> lines_;              // sorted by addr
  Dwarf_Files* files_ = nullptr;
  size_t file_count_ = 0;
  // Source paths: libdw gives them relative to the directory the unit was
  // compiled in when the compiler was given a relative path (meson and
  // cmake builds do), so they are joined to DW_AT_comp_dir, as addr2line
  // does, once per distinct name.
  std::string comp_dir_;
  std::deque<std::string> paths_;  // a deque: references stay valid as it grows
  std::unordered_map<const char*, uint32_t> path_index_;
};

}  // namespace sample
