#include "libsample/symbols/address_frames.h"

#include <fmt/format.h>

#include "libsample/symbols/binary_symbolizer.h"

namespace sample {

bool CutInlineChain(std::vector<AddressFrame>& frames, size_t depth) {
  if (frames.size() <= depth || depth < 2) return false;
  frames[depth - 1] = std::move(frames.back());
  frames.resize(depth);
  return true;
}

std::vector<AddressFrame> FramesAtFileOffset(BinarySymbolizer& symbolizer, uint64_t file_offset,
                                             std::string_view display_name) {
  const std::vector<SymbolFrame> frames = symbolizer.SymbolizeFileOffset(file_offset);
  std::vector<AddressFrame> out;
  for (const SymbolFrame& frame : frames) {
    if (frame.function.empty()) continue;
    out.push_back(AddressFrame{frame.function, frame.file, frame.line, frame.inlined});
  }
  const ElfSymbols& elf = symbolizer.elf_symbols();
  const auto vaddr = elf.FileOffsetToVaddr(file_offset);
  if (out.empty()) {
    // No name: the function is still one FDE of the binary's call-frame
    // information, which groups its addresses under its start. A line
    // without a function (rare) still helps --sort srcline.
    AddressFrame frame;
    if (!frames.empty()) {
      frame.file = frames.front().file;
      frame.line = frames.front().line;
    }
    const auto start = vaddr ? symbolizer.CfiFunctionStart(*vaddr) : std::nullopt;
    if (start) {
      frame.name = fmt::format("{}+{:#x}", display_name, *start);
      frame.symbol_offset = *vaddr - *start;
    }
    out.push_back(std::move(frame));
    return out;
  }
  // The outer function as its ELF symbol names it, when one covers the
  // address (perf's names: DWARF may know a glibc function by an internal
  // alias such as __GI___clock_gettime), and the offset in it.
  if (vaddr) {
    if (const ElfSymbol* symbol = elf.Find(*vaddr)) {
      out.back().symbol_offset = *vaddr - symbol->start;
      if (!out.back().inlined) out.back().name = symbolizer.SymbolName(*symbol);
    }
  }
  CutInlineChain(out, kMaxReadInlineDepth);
  return out;
}

}  // namespace sample
