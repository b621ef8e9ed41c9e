// The frames that name one file offset of a binary, as every view shows
// them: DWARF's inline chain with the outer function named as its ELF
// symbol names it, the FDE's start for code no symbol names
// ("liblzma.so.5+0x15b40"), or an unknown frame that may still carry a
// source line. One function computes them, so the report reading a binary
// and the recorder embedding what the report would have read give the same
// frames for the same offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sample {

class BinarySymbolizer;

// One frame of a location, innermost first: inlined calls, then the
// function. Plain data: the recording's embedded tables hold these.
struct AddressFrame {
  std::string name;  // demangled; empty: nothing names the address (an unknown frame)
  std::string file;  // the source file as DWARF records it; may be empty
  uint32_t line = 0;
  bool inlined = false;
  // Offset of the location in the (outer) function; UINT64_MAX when unknown.
  uint64_t symbol_offset = UINT64_MAX;
  bool operator==(const AddressFrame&) const = default;
};

// The frames of `file_offset` (a lookup address: `pc - 1` for return
// addresses) in `symbolizer`'s binary; `display_name` is the binary's
// short name for FDE-named functions. At least one frame; an unknown one
// (empty name) when nothing names the offset.
std::vector<AddressFrame> FramesAtFileOffset(BinarySymbolizer& symbolizer, uint64_t file_offset,
                                             std::string_view display_name);

}  // namespace sample
