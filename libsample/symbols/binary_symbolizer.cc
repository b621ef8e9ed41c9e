#include "libsample/symbols/binary_symbolizer.h"

#include <dwarf.h>

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "libsample/symbols/dwarf_file.h"
#include "libsample/symbols/dwarf_unit_index.h"

namespace sample {

std::string SymbolFrame::srcline() const {
  if (file.empty() || line == 0) return "";
  return fmt::format("{}:{}", file, line);
}

struct BinarySymbolizer::State {
  // An address range of one compilation unit.
  struct UnitRange {
    uint64_t lo = 0;
    uint64_t hi = 0;  // exclusive
    uint32_t unit = 0;
  };

  explicit State(ElfSymbols symbols) : elf(std::move(symbols)) {}

  void ReadUnitRanges();
  // Whether unit `unit` is a DW_TAG_compile_unit, read on first use.
  bool IsCompileUnit(uint32_t unit);
  DwarfUnitIndex* FindUnit(uint64_t vaddr);
  // The outermost frame's name when DWARF gives none.
  void NameFromElf(uint64_t vaddr, SymbolFrame* frame) const;
  // The binary's CFI functions, opened on first use; nullptr without CFI.
  const CfiFunctions* Cfi();

  ElfSymbols elf;
  std::string binary_path;
  std::string debug_path;
  bool dwarf_read = false;          // ReadDwarf was called
  std::optional<CfiFunctions> cfi;  // opened on first use
  bool cfi_tried = false;
  std::optional<DwarfFile> dwarf;
  std::string dwarf_path;
  std::string dwarf_error;
  std::vector<Dwarf_Die> unit_dies;  // the top DIEs of DW_UT_compile units
  std::vector<int8_t> compile_unit;  // by unit: IsCompileUnit's answer; -1 not read yet
  std::vector<UnitRange> ranges;     // sorted by lo; may overlap in a malformed file
  std::vector<uint64_t> max_hi;      // max_hi[i]: the largest hi of ranges[0..i]
  std::vector<std::unique_ptr<DwarfUnitIndex>> indexes;  // by unit, built on demand
  size_t indexed = 0;
};

// The unit address table comes from .debug_aranges where the compiler wrote
// it (GCC does; clang and rustc by default do not), else from each unit
// DIE's DW_AT_low_pc/high_pc/ranges. Only unit headers and top DIEs are
// read, and a top DIE's tag (its abbreviation, the costly part: 3.4 of the
// 10 ms libc's debug file took to open, for 2,063 units) only once the
// unit holds a looked-up address or has no .debug_aranges entry.
void BinarySymbolizer::State::ReadUnitRanges() {
  Dwarf* dw = dwarf->get();
  // (top DIE offset, unit), in .debug_info order: ascending.
  std::vector<std::pair<Dwarf_Off, uint32_t>> unit_of_offset;
  Dwarf_CU* cu = nullptr;
  Dwarf_Die cu_die;
  Dwarf_Die sub_die;
  uint8_t unit_type = 0;
  while (dwarf_get_units(dw, cu, &cu, nullptr, &unit_type, &cu_die, &sub_die) == 0) {
    // Partial and type units hold no code of their own; split-DWARF
    // skeletons (DW_UT_skeleton) are not supported.
    if (unit_type != DW_UT_compile) continue;
    unit_of_offset.emplace_back(dwarf_dieoffset(&cu_die), static_cast<uint32_t>(unit_dies.size()));
    unit_dies.push_back(cu_die);
  }
  if (!std::is_sorted(unit_of_offset.begin(), unit_of_offset.end())) {
    std::sort(unit_of_offset.begin(), unit_of_offset.end());
  }
  std::vector<bool> covered(unit_dies.size(), false);
  Dwarf_Aranges* aranges = nullptr;
  size_t count = 0;
  if (dwarf_getaranges(dw, &aranges, &count) == 0) {
    for (size_t i = 0; i < count; ++i) {
      Dwarf_Addr start = 0;
      Dwarf_Word length = 0;
      Dwarf_Off offset = 0;
      Dwarf_Arange* arange = dwarf_onearange(aranges, i);
      if (arange == nullptr || dwarf_getarangeinfo(arange, &start, &length, &offset) != 0 ||
          length == 0 || IsDiscardedRange(start)) {
        continue;
      }
      auto it = std::lower_bound(unit_of_offset.begin(), unit_of_offset.end(),
                                 std::pair<Dwarf_Off, uint32_t>(offset, 0));
      if (it == unit_of_offset.end() || it->first != offset) continue;
      ranges.push_back(UnitRange{start, start + length, it->second});
      covered[it->second] = true;
    }
  }
  compile_unit.assign(unit_dies.size(), -1);
  for (uint32_t unit = 0; unit < unit_dies.size(); ++unit) {
    if (covered[unit] || !IsCompileUnit(unit)) continue;
    Dwarf_Addr base = 0;
    Dwarf_Addr start = 0;
    Dwarf_Addr end = 0;
    for (ptrdiff_t offset = 0;
         (offset = dwarf_ranges(&unit_dies[unit], offset, &base, &start, &end)) > 0;) {
      if (start < end && !IsDiscardedRange(start)) ranges.push_back(UnitRange{start, end, unit});
    }
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const UnitRange& a, const UnitRange& b) { return a.lo < b.lo; });
  max_hi.reserve(ranges.size());
  for (const UnitRange& range : ranges) {
    max_hi.push_back(max_hi.empty() ? range.hi : std::max(max_hi.back(), range.hi));
  }
  indexes.resize(unit_dies.size());
}

bool BinarySymbolizer::State::IsCompileUnit(uint32_t unit) {
  // Partial and type units hold no code of their own, whatever their
  // header says.
  if (compile_unit[unit] < 0)
    compile_unit[unit] = dwarf_tag(&unit_dies[unit]) == DW_TAG_compile_unit;
  return compile_unit[unit] != 0;
}

DwarfUnitIndex* BinarySymbolizer::State::FindUnit(uint64_t vaddr) {
  auto next = std::upper_bound(ranges.begin(), ranges.end(), vaddr,
                               [](uint64_t v, const UnitRange& r) { return v < r.lo; });
  // Walk back over ranges starting at or before vaddr while one of them can
  // still reach it: one step unless ranges overlap.
  for (auto i = static_cast<size_t>(next - ranges.begin()); i > 0 && max_hi[i - 1] > vaddr; --i) {
    const UnitRange& range = ranges[i - 1];
    if (vaddr >= range.hi || !IsCompileUnit(range.unit)) continue;
    std::unique_ptr<DwarfUnitIndex>& index = indexes[range.unit];
    if (index == nullptr) {
      index = std::make_unique<DwarfUnitIndex>(DwarfUnitIndex::Build(unit_dies[range.unit]));
      ++indexed;
    }
    return index.get();
  }
  return nullptr;
}

void BinarySymbolizer::State::NameFromElf(uint64_t vaddr, SymbolFrame* frame) const {
  const ElfSymbol* symbol = elf.Find(vaddr);
  if (symbol == nullptr) return;
  frame->function = symbol->name;
  if (symbol->name.ends_with("@plt")) {
    frame->name_source = NameSource::kPlt;
  } else {
    frame->name_source = elf.has_symtab() ? NameSource::kSymtab : NameSource::kDynsym;
  }
}

Result<BinarySymbolizer> BinarySymbolizer::Open(const std::string& binary_path,
                                                const std::string& debug_path, DwarfUse dwarf_use) {
  TRY_ASSIGN(auto symbols, ElfSymbols::Load(binary_path, debug_path));
  auto state = std::make_unique<State>(std::move(symbols));
  state->binary_path = binary_path;
  state->debug_path = debug_path;
  state->dwarf_error = "DWARF not read";
  BinarySymbolizer symbolizer(std::move(state));
  if (dwarf_use == DwarfUse::kRead) symbolizer.ReadDwarf();
  return symbolizer;
}

void BinarySymbolizer::ReadDwarf() {
  State& state = *state_;
  if (state.dwarf_read) return;
  state.dwarf_read = true;
  std::vector<std::string> errors;
  for (const std::string& path : {state.debug_path, state.binary_path}) {
    if (path.empty()) continue;
    auto dwarf = DwarfFile::Open(path);
    if (!dwarf) {
      errors.push_back(dwarf.error().message);
      continue;
    }
    state.dwarf.emplace(std::move(*dwarf));
    state.dwarf_path = path;
    state.dwarf_error.clear();
    state.ReadUnitRanges();
    return;
  }
  state.dwarf_error = fmt::format("{}", fmt::join(errors, "; "));
}

BinarySymbolizer::BinarySymbolizer(std::unique_ptr<State> state) : state_(std::move(state)) {}
BinarySymbolizer::BinarySymbolizer(BinarySymbolizer&&) noexcept = default;
BinarySymbolizer& BinarySymbolizer::operator=(BinarySymbolizer&&) noexcept = default;
BinarySymbolizer::~BinarySymbolizer() = default;

const CfiFunctions* BinarySymbolizer::State::Cfi() {
  if (!cfi_tried) {
    cfi_tried = true;
    if (auto functions = CfiFunctions::Open(binary_path)) cfi.emplace(std::move(*functions));
  }
  return cfi ? &*cfi : nullptr;
}

std::optional<uint64_t> BinarySymbolizer::CfiFunctionStart(uint64_t vaddr) {
  const CfiFunctions* cfi = state_->Cfi();
  return cfi != nullptr ? cfi->StartOf(vaddr) : std::nullopt;
}

std::optional<CfiRange> BinarySymbolizer::CfiFunctionRange(uint64_t vaddr) {
  const CfiFunctions* cfi = state_->Cfi();
  return cfi != nullptr ? cfi->RangeOf(vaddr) : std::nullopt;
}

std::vector<SymbolFrame> BinarySymbolizer::SymbolizeFileOffset(uint64_t file_offset) {
  const std::optional<uint64_t> vaddr = state_->elf.FileOffsetToVaddr(file_offset);
  if (!vaddr) return {};
  return SymbolizeVaddr(*vaddr);
}

BinarySymbolizer::LookupKey BinarySymbolizer::KeyAtFileOffset(uint64_t file_offset) {
  LookupKey key;
  const std::optional<uint64_t> vaddr = state_->elf.FileOffsetToVaddr(file_offset);
  if (!vaddr) return key;
  key.bias = *vaddr - file_offset;
  if (DwarfUnitIndex* unit = state_->dwarf ? state_->FindUnit(*vaddr) : nullptr) {
    key.unit = unit;
    key.row = unit->LineRowAt(*vaddr);
    key.scope = unit->InnermostScope(*vaddr);
  }
  key.symbol = state_->elf.Find(*vaddr);
  key.fde_start = CfiFunctionStart(*vaddr);
  return key;
}

std::vector<SymbolFrame> BinarySymbolizer::SymbolizeVaddr(uint64_t vaddr) {
  std::vector<SymbolFrame> frames;
  if (DwarfUnitIndex* unit = state_->dwarf ? state_->FindUnit(vaddr) : nullptr) {
    // The innermost frame is at the address's own line; each outer frame is
    // at the line that called the inlined frame inside it.
    const auto line = unit->LineAt(vaddr);
    std::string file = line ? *line->file : "";
    uint32_t line_number = line ? line->line : 0;
    for (int32_t s = unit->InnermostScope(vaddr); s >= 0; s = unit->scope(s).parent) {
      const DwarfUnitIndex::Scope& scope = unit->scope(s);
      SymbolFrame& frame = frames.emplace_back();
      frame.function = unit->ScopeName(s);
      if (!frame.function.empty()) frame.name_source = NameSource::kDwarf;
      frame.file = file;
      frame.line = line_number;
      frame.inlined = scope.inlined;
      if (!scope.inlined) break;
      const std::string* call_file = unit->FileName(scope.call_file);
      file = call_file != nullptr ? *call_file : "";
      line_number = scope.call_line;
    }
    // A line but no function (assembly with line info), or an inline chain
    // without its real function (malformed): the caller's frame is still due.
    if ((frames.empty() && line) || (!frames.empty() && frames.back().inlined)) {
      SymbolFrame& frame = frames.emplace_back();
      frame.file = file;
      frame.line = line_number;
    }
  }
  if (frames.empty()) frames.emplace_back();
  if (frames.back().function.empty()) state_->NameFromElf(vaddr, &frames.back());
  if (frames.size() == 1 && frames[0].function.empty() && frames[0].srcline().empty()) return {};
  return frames;
}

std::vector<std::pair<uint64_t, uint64_t>> BinarySymbolizer::UnitRangesAt(uint64_t vaddr) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (!state_->dwarf) return out;
  const std::vector<State::UnitRange>& ranges = state_->ranges;
  auto next = std::upper_bound(ranges.begin(), ranges.end(), vaddr,
                               [](uint64_t v, const State::UnitRange& r) { return v < r.lo; });
  std::optional<uint32_t> unit;
  for (auto i = static_cast<size_t>(next - ranges.begin());
       i > 0 && state_->max_hi[i - 1] > vaddr && !unit; --i) {
    const State::UnitRange& range = ranges[i - 1];
    if (vaddr < range.hi && state_->IsCompileUnit(range.unit)) unit = range.unit;
  }
  if (!unit) return out;
  for (const State::UnitRange& range : ranges) {
    if (range.unit == *unit) out.emplace_back(range.lo, range.hi);
  }
  return out;
}

const ElfSymbols& BinarySymbolizer::elf_symbols() const { return state_->elf; }
const std::string& BinarySymbolizer::dwarf_path() const { return state_->dwarf_path; }
const std::string& BinarySymbolizer::dwarf_error() const { return state_->dwarf_error; }
size_t BinarySymbolizer::unit_count() const { return state_->unit_dies.size(); }
size_t BinarySymbolizer::indexed_unit_count() const { return state_->indexed; }

}  // namespace sample
