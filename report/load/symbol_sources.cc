#include "report/load/symbol_sources.h"

#include <cerrno>

#include <fmt/format.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/function_names.h"

namespace sample::report {
namespace {

// One named frame `offset - start` into its symbol.
std::vector<ResolvedFrame> NamedFrame(const std::string& name, uint64_t offset, uint64_t start) {
  ResolvedFrame frame;
  frame.name = name;
  frame.symbol_offset = offset - start;
  return {std::move(frame)};
}

// A binary's function name as the report shows it: without its parameter
// list, the full one kept as the signature.
void NameFromBinary(ResolvedFrame& frame, const std::string& demangled) {
  frame.name = WithoutParameters(demangled);
  if (frame.name != demangled) frame.signature = demangled;
}

}  // namespace

std::vector<ResolvedFrame> ToResolvedFrames(const std::vector<AddressFrame>& frames,
                                            uint64_t offset, bool srclines) {
  std::vector<ResolvedFrame> out;
  out.reserve(frames.size());
  for (const AddressFrame& frame : frames) {
    ResolvedFrame resolved = frame.name.empty() ? UnknownFrame(offset) : ResolvedFrame{};
    if (!frame.name.empty()) {
      NameFromBinary(resolved, frame.name);
      resolved.inlined = frame.inlined;
      resolved.symbol_offset = frame.symbol_offset;
    }
    if (srclines && !frame.file.empty() && frame.line != 0) {
      resolved.srcline = fmt::format("{}:{}", Basename(frame.file), frame.line);
    }
    out.push_back(std::move(resolved));
  }
  if (out.empty()) out.push_back(UnknownFrame(offset));
  return out;
}

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

KernelSymbolSource::KernelSymbolSource(std::vector<KernelSymbol> sorted, const std::string& origin)
    : symbols_(std::move(sorted)) {
  facts_.source = symbols_.empty() ? "none: the recording holds no kernel symbols"
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

PerfMapSymbolSource::PerfMapSymbolSource(Result<PerfMap> map, std::string origin) {
  if (map) {
    map_.emplace(std::move(*map));
    facts_.source = std::move(origin);
  } else if (map.error().sys_errno == ENOENT) {
    // Anonymous executable memory is no JIT that writes a map (libffi's
    // trampolines, a sandbox's stubs): on a whole machine, many processes
    // have some. Said in --stats, not warned of.
    facts_.source = "none: " + map.error().message + " (the process wrote no perf map)";
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

std::unique_ptr<SymbolSource> BinarySymbolSource::Open(BinaryLocator& locator,
                                                       const std::string& path,
                                                       const std::string& recorded_build_id,
                                                       bool srclines) {
  LocatedBinary located = locator.Locate(path, recorded_build_id);
  if (located.embedded != nullptr) {
    return std::make_unique<EmbeddedSymbolSource>(*located.embedded, located, srclines);
  }
  std::optional<BinarySymbolizer> symbolizer;
  if (!located.binary.empty()) {
    auto opened = BinarySymbolizer::Open(located.binary, located.debug);
    if (opened) {
      symbolizer.emplace(std::move(*opened));
      located.NoteOpened(!symbolizer->dwarf_path().empty());
      if (symbolizer->dwarf_path().empty() && symbolizer->elf_symbols().go_table() != nullptr) {
        located.source += " + Go function table";
      }
    } else {
      located.NoteUnreadable(opened.error().message);
    }
  }
  SourceFacts facts{std::move(located.source), std::move(located.warnings), located.missing,
                    located.mismatched};
  return std::unique_ptr<BinarySymbolSource>(
      new BinarySymbolSource(std::move(symbolizer), std::move(facts), srclines, Basename(path)));
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
  return ToResolvedFrames(FramesAtFileOffset(*symbolizer_, offset, display_name_), offset,
                          srclines_);
}

EmbeddedSymbolSource::EmbeddedSymbolSource(const EmbeddedBinary& binary,
                                           const LocatedBinary& located, bool srclines)
    : binary_(binary), srclines_(srclines) {
  const size_t functions = binary.functions.size();
  facts_.source =
      fmt::format("{}, {} function{}", located.source, functions, functions == 1 ? "" : "s");
  facts_.warnings = located.warnings;
  facts_.mismatched = located.mismatched;
}

std::vector<std::vector<ResolvedFrame>> EmbeddedSymbolSource::Symbolize(
    std::span<const uint64_t> offsets) {
  std::vector<std::vector<ResolvedFrame>> out;
  out.reserve(offsets.size());
  for (uint64_t offset : offsets) out.push_back(FramesAt(offset));
  return out;
}

std::vector<ResolvedFrame> EmbeddedSymbolSource::FramesAt(uint64_t offset) const {
  if (const std::vector<AddressFrame>* frames = binary_.FramesAt(offset)) {
    return ToResolvedFrames(*frames, offset, srclines_);
  }
  const std::optional<uint64_t> vaddr = binary_.FileOffsetToVaddr(offset);
  const EmbeddedFunction* function = vaddr ? binary_.FunctionAt(*vaddr) : nullptr;
  if (function == nullptr) return {UnknownFrame(offset)};
  std::vector<ResolvedFrame> frames = NamedFrame(function->name, *vaddr, function->start);
  NameFromBinary(frames[0], function->name);
  return frames;
}

}  // namespace sample::report
