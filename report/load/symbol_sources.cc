#include "report/load/symbol_sources.h"

#include <fmt/format.h>

#include "libsample/string_parts.h"

namespace sample::report {
namespace {

std::string SourceLine(const SymbolFrame& frame) {
  if (frame.file.empty() || frame.line == 0) return {};
  return fmt::format("{}:{}", Basename(frame.file), frame.line);
}

// One named frame `offset - start` into its symbol.
std::vector<ResolvedFrame> NamedFrame(const std::string& name, uint64_t offset, uint64_t start) {
  ResolvedFrame frame;
  frame.name = name;
  frame.symbol_offset = offset - start;
  return {std::move(frame)};
}

}  // namespace

ResolvedFrame UnknownFrame(uint64_t offset) {
  ResolvedFrame frame;
  frame.name = fmt::format("[unknown] {:#x}", offset);
  frame.known = false;
  return frame;
}

std::vector<std::vector<ResolvedFrame>> NoSymbolSource::Symbolize(
    std::span<const uint64_t> offsets) {
  std::vector<std::vector<ResolvedFrame>> out;
  out.reserve(offsets.size());
  for (uint64_t offset : offsets) out.push_back({UnknownFrame(offset)});
  return out;
}

KernelSymbolSource::KernelSymbolSource(std::vector<KernelSymbol> sorted,
                                       const std::string& origin)
    : symbols_(std::move(sorted)) {
  facts_.source = symbols_.empty()
                      ? "none: the recording holds no kernel symbols"
                      : fmt::format("{} ({} symbols)", origin, symbols_.size());
}

std::vector<std::vector<ResolvedFrame>> KernelSymbolSource::Symbolize(
    std::span<const uint64_t> offsets) {
  std::vector<std::vector<ResolvedFrame>> out;
  out.reserve(offsets.size());
  for (uint64_t address : offsets) {
    const KernelSymbol* symbol = FindKernelSymbol(symbols_, address);
    out.push_back(symbol ? NamedFrame(symbol->name, address, symbol->addr)
                         : std::vector{UnknownFrame(address)});
  }
  return out;
}

PerfMapSymbolSource::PerfMapSymbolSource(Result<PerfMap> map) {
  if (map) {
    map_.emplace(std::move(*map));
    facts_.source = "perf map";
  } else {
    facts_.warnings.push_back(map.error().message);
    facts_.source = "none: " + map.error().message;
  }
}

std::vector<std::vector<ResolvedFrame>> PerfMapSymbolSource::Symbolize(
    std::span<const uint64_t> offsets) {
  std::vector<std::vector<ResolvedFrame>> out;
  out.reserve(offsets.size());
  for (uint64_t address : offsets) {
    const PerfMapSymbol* symbol = map_ ? map_->Find(address) : nullptr;
    out.push_back(symbol ? NamedFrame(symbol->name, address, symbol->start)
                         : std::vector{UnknownFrame(address)});
  }
  return out;
}

std::unique_ptr<BinarySymbolSource> BinarySymbolSource::Open(BinaryLocator& locator,
                                                             const std::string& path,
                                                             const std::string& recorded_build_id,
                                                             bool srclines) {
  LocatedBinary located = locator.Locate(path, recorded_build_id);
  std::optional<BinarySymbolizer> symbolizer;
  if (!located.binary.empty()) {
    auto opened = BinarySymbolizer::Open(located.binary, located.debug);
    if (opened) {
      symbolizer.emplace(std::move(*opened));
      located.NoteOpened(!symbolizer->dwarf_path().empty());
    } else {
      located.NoteUnreadable(opened.error().message);
    }
  }
  SourceFacts facts{std::move(located.source), std::move(located.warnings), located.missing,
                    located.mismatched};
  return std::unique_ptr<BinarySymbolSource>(
      new BinarySymbolSource(std::move(symbolizer), std::move(facts), srclines,
                             Basename(path)));
}

std::vector<std::vector<ResolvedFrame>> BinarySymbolSource::Symbolize(
    std::span<const uint64_t> offsets) {
  std::vector<std::vector<ResolvedFrame>> out;
  out.reserve(offsets.size());
  for (uint64_t offset : offsets) out.push_back(FramesAt(offset));
  return out;
}

std::vector<ResolvedFrame> BinarySymbolSource::FramesAt(uint64_t offset) {
  if (!symbolizer_) return {UnknownFrame(offset)};
  const std::vector<SymbolFrame> frames = symbolizer_->SymbolizeFileOffset(offset);
  std::vector<ResolvedFrame> out;
  for (const SymbolFrame& frame : frames) {
    if (frame.function.empty()) continue;
    ResolvedFrame resolved;
    resolved.name = frame.function;
    resolved.inlined = frame.inlined;
    if (srclines_) resolved.srcline = SourceLine(frame);
    out.push_back(std::move(resolved));
  }
  if (out.empty()) {
    // No name: the function is still one FDE of the binary's call-frame
    // information, which groups its addresses under its start.
    const auto vaddr = symbolizer_->elf_symbols().FileOffsetToVaddr(offset);
    const auto start = vaddr ? symbolizer_->CfiFunctionStart(*vaddr) : std::nullopt;
    if (start) {
      ResolvedFrame frame;
      frame.name = fmt::format("{}+{:#x}", display_name_, *start);
      frame.symbol_offset = *vaddr - *start;
      if (srclines_ && !frames.empty()) frame.srcline = SourceLine(frames.front());
      out.push_back(std::move(frame));
      return out;
    }
    out.push_back(UnknownFrame(offset));
    // A line without a function (rare) still helps --sort srcline.
    if (srclines_ && !frames.empty()) out.back().srcline = SourceLine(frames.front());
    return out;
  }
  // The outer function as its ELF symbol names it, when one covers the
  // address (perf's names: DWARF may know a glibc function by an internal
  // alias such as __GI___clock_gettime), and the offset in it.
  const ElfSymbols& elf = symbolizer_->elf_symbols();
  if (auto vaddr = elf.FileOffsetToVaddr(offset)) {
    if (const ElfSymbol* symbol = elf.Find(*vaddr)) {
      out.back().symbol_offset = *vaddr - symbol->start;
      if (!out.back().inlined && out.back().known) out.back().name = symbol->name;
    }
  }
  return out;
}

}  // namespace sample::report
