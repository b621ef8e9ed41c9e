// The rows of one annotated function (annotate_view.h): its code decoded a
// piece at a time, each instruction made a row with its text, samples and
// source line, and, for a function too big to show whole, only the rows
// near its sampled instructions kept, each run left out as one row.
//
// Why pieces and cuts: a jitdump or a recording's embedded tables can hand
// the annotator megabytes of code that a few kilobytes of file hold (8 MiB
// of nops compress to a kilobyte), and Capstone's decoding of a whole
// function at once, then a row of some 200 bytes per instruction, took
// 4.5 GB and 446 MB of text for two such functions (issue 56). Decoded in
// pieces of kPieceBytes, a function costs memory for the rows it shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "libsample/disasm/disassembler.h"
#include "libsample/symbols/function_code.h"
#include "report/views/annotate_view.h"

namespace sample::report {

// Decodes `code`, loaded at `address`, `piece_bytes` at a time (at least
// 16), calling `each` on every instruction in order until it returns
// false: the same instructions Decode of the whole gives, as each piece but
// the last stops short of the longest instruction (15 bytes) before its
// end. (Pieces other than kPieceBytes: for the fuzz target, whose inputs
// are smaller.)
inline constexpr size_t kPieceBytes = size_t{64} << 10;
void DecodeInPieces(const Disassembler& disassembler, std::span<const std::byte> code,
                    uint64_t address, const std::function<bool(const Instruction&)>& each,
                    size_t piece_bytes = kPieceBytes);

struct FunctionRows {
  std::vector<AnnotatedInstruction> rows;
  uint64_t instructions = 0;  // decoded, shown or not
  bool cut = false;           // some were left out
  uint64_t placed = 0;        // samples at an instruction's first byte
};

// The rows of `code` (of the function `hits` counts): every instruction's
// when there are at most `whole`; else only those within `near` of a
// sampled one, each run of others one row with `left_out`. `source` names
// branch targets and gives each instruction's frames.
FunctionRows AnnotateRows(const Disassembler& disassembler, const FunctionCode& code,
                          const IndexedFunction& hits, CodeSource& source, size_t whole,
                          size_t near);

}  // namespace sample::report
