// The frames that name one file offset of a binary, as every view shows
// them: DWARF's inline chain with the outer function named as its ELF
// symbol names it, the FDE's start for code no symbol names
// ("liblzma.so.5+0x15b40"), or an unknown frame that may still carry a
// source line. One function computes them, so the report reading a binary
// and the recorder embedding what the report would have read give the same
// frames for the same offset.
#pragma once

#include <cstddef>
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

// How many frames of one address the report shows: its innermost
// kMaxInlineDepth - 1 inlined calls and the function holding them. Real
// programs reach a few dozen (deeply templated C++ and Rust iterator
// chains); DWARF can claim any number, and a crafted recording's 100,000
// inlined calls per address cost every view minutes and a gigabyte.
inline constexpr size_t kMaxInlineDepth = 256;
// What a chain is cut to where frames are read (FramesAtFileOffset, the
// embedded tables' decoder): one frame more than the report shows, so
// that the report still sees the chain was deeper, and cuts and counts it
// the same way whichever source named it.
inline constexpr size_t kMaxReadInlineDepth = kMaxInlineDepth + 1;

// Cuts `frames` (innermost first) to `depth` frames (at least 2): the
// innermost depth - 1 and the last, the function holding the address,
// whose row the flat profile shows. True when it cut.
bool CutInlineChain(std::vector<AddressFrame>& frames, size_t depth);

// The frames of `file_offset` (a lookup address: `pc - 1` for return
// addresses) in `symbolizer`'s binary; `display_name` is the binary's
// short name for FDE-named functions. At least one frame; an unknown one
// (empty name) when nothing names the offset; at most kMaxReadInlineDepth.
std::vector<AddressFrame> FramesAtFileOffset(BinarySymbolizer& symbolizer, uint64_t file_offset,
                                             std::string_view display_name);

}  // namespace sample
