#include "libsample/symbols/binary_symbolizer.h"

#include <dwarf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "libsample/symbols/dwarf_file.h"
#include "libsample/symbols/dwarf_unit_index.h"
#include "libsample/symbols/dwarf_unit_table.h"
#include "libsample/symbols/elf_file.h"

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
  // The outermost frame's name when DWARF gives none; for a Go function
  // without DWARF, its inlined calls' frames before it too.
  void NameFromElf(uint64_t vaddr, std::vector<SymbolFrame>* frames);
  // The decoded tables of the Go function at `vaddr`, or nullptr where the
  // binary's Go function table has none. Kept in 256 slots by function (a
  // report looks its locations up in no order; runtime functions' tables
  // are thousands of steps).
  const GoPclntab::FunctionTables* GoTablesAt(uint64_t vaddr);
  const std::string& SymbolName(const ElfSymbol& symbol);
  // The binary's CFI functions, opened on first use; nullptr without CFI.
  const CfiFunctions* Cfi();

  ElfSymbols elf;
  // Demangled names by symbol index, direct-mapped (SymbolName).
  struct Named {
    size_t index = SIZE_MAX;
    std::string name;
  };
  std::array<Named, 256> named;
  std::string other_name;  // a symbol of another ElfSymbols' (SymbolName)
  std::vector<GoPclntab::FunctionTables> go_tables;  // GoTablesAt's, direct-mapped
  size_t go_table_steps = 0;                         // the steps go_tables hold
  static constexpr size_t kMaxGoTableSteps = size_t{1} << 22;  // 64 MiB
  std::string binary_path;
  std::string debug_path;
  bool dwarf_read = false;          // ReadDwarf was called
  std::optional<CfiFunctions> cfi;  // opened on first use
  // The last CfiFunctionStart answer, and the addresses it holds for.
  struct FdeStart {
    std::optional<uint64_t> start;
    CfiRange same;  // empty: none yet
  };
  FdeStart last_fde_start;
  bool cfi_tried = false;
  std::optional<DwarfFile> dwarf;
  std::string dwarf_path;
  std::string dwarf_error;
  // The units of .debug_info that may hold code: version 5 DW_UT_compile
  // headers, and every header of an earlier version.
  std::vector<DwarfUnitHeader> units;  // in .debug_info order
  std::vector<Dwarf_Die> unit_dies;    // by unit: its top DIE, once IsCompileUnit read it
  std::vector<int8_t> compile_unit;  // by unit: IsCompileUnit's answer; -1 not read yet
  std::vector<UnitRange> ranges;     // sorted by lo; may overlap in a malformed file
  std::vector<uint64_t> max_hi;      // max_hi[i]: the largest hi of ranges[0..i]
  std::vector<std::unique_ptr<DwarfUnitIndex>> indexes;  // by unit, built on demand
  size_t indexed = 0;
};

namespace {

// The bytes of DWARF section `name` (".debug_info") as libdw reads them:
// the first section named so or in its .zdebug_ form that is neither
// SHT_NOBITS nor in a section group (dwarf_begin_elf's choice, which
// inflates compressed sections in place).
std::span<const std::byte> SectionBytes(Elf* elf, std::string_view name) {
  const std::string gnu_name = fmt::format(".z{}", name.substr(1));
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return {};
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS ||
        (shdr.sh_flags & SHF_GROUP) != 0) {
      continue;
    }
    const char* scn_name = elf_strptr(elf, names, shdr.sh_name);
    if (scn_name == nullptr || (scn_name != name && scn_name != gnu_name)) continue;
    // One libdw could not inflate, or empty: skipped by libdw too.
    Elf_Data* data = (shdr.sh_flags & SHF_COMPRESSED) == 0 ? elf_getdata(scn, nullptr) : nullptr;
    if (data == nullptr || data->d_buf == nullptr || data->d_size == 0) continue;
    return std::span(static_cast<const std::byte*>(data->d_buf), data->d_size);
  }
  return {};
}

}  // namespace

// The unit address table comes from .debug_aranges where the compiler wrote
// it (GCC does; clang and rustc by default do not), else from each unit
// DIE's DW_AT_low_pc/high_pc/ranges. Both sections are read from their
// bytes (dwarf_unit_table.h: libdw records every unit before the one asked
// for), so a unit's top DIE is read, and libdw's record of it made, only
// once the unit holds a looked-up address or has no .debug_aranges entry.
void BinarySymbolizer::State::ReadUnitRanges() {
  Dwarf* dw = dwarf->get();
  Elf* elf = dwarf_getelf(dw);
  const char* ident = elf_getident(elf, nullptr);
  const bool big_endian = ident != nullptr && ident[EI_DATA] == ELFDATA2MSB;
  // Partial and type units hold no code of their own; split-DWARF
  // skeletons (DW_UT_skeleton) are not supported. Units before version 5
  // say what they are in their top DIE only (IsCompileUnit).
  const std::span<const std::byte> info = SectionBytes(elf, ".debug_info");
  const std::span<const std::byte> abbrev = SectionBytes(elf, ".debug_abbrev");
  for (const DwarfUnitHeader& header : ParseUnitHeaders(info, big_endian)) {
    if (header.version >= 5 && header.unit_type != DW_UT_compile) continue;
    units.push_back(header);
  }
  unit_dies.resize(units.size());
  compile_unit.assign(units.size(), -1);
  std::vector<bool> covered(units.size(), false);
  if (auto aranges = ParseDebugAranges(SectionBytes(elf, ".debug_aranges"), big_endian)) {
    for (const UnitAddressRange& arange : *aranges) {
      if (IsDiscardedRange(arange.lo)) continue;
      auto it = std::lower_bound(
          units.begin(), units.end(), arange.unit_offset,
          [](const DwarfUnitHeader& u, uint64_t offset) { return u.offset < offset; });
      if (it == units.end() || it->offset != arange.unit_offset) continue;
      const auto unit = static_cast<uint32_t>(it - units.begin());
      ranges.push_back(UnitRange{arange.lo, arange.hi, unit});
      covered[unit] = true;
    }
  }
  UnitTopDies tops(info, abbrev);
  for (uint32_t unit = 0; unit < units.size(); ++unit) {
    if (covered[unit]) continue;
    // A unit whose top DIE has neither DW_AT_low_pc nor DW_AT_ranges (by its
    // abbreviation) holds no code: libdw need not read it. GCC's units of
    // variables alone (126 of libc's) have no .debug_aranges entry.
    if (const auto top = tops.Of(units[unit]); top && !top->has_code) continue;
    if (!IsCompileUnit(unit)) continue;
    Dwarf_Addr base = 0;
    Dwarf_Addr start = 0;
    Dwarf_Addr end = 0;
    for (ptrdiff_t offset = 0;
         (offset = dwarf_ranges(&unit_dies[unit], offset, &base, &start, &end)) > 0;) {
      if (start < end && !IsDiscardedRange(start)) ranges.push_back(UnitRange{start, end, unit});
    }
  }
  // Where units claim the same addresses (bfd points the .debug_aranges of
  // each COMDAT copy it discarded at the copy it kept: 19 units claim one
  // shared_ptr function in our unit tests), the first unit in .debug_info
  // describes the code: the linker keeps the first copy it reads. Lookups
  // walk back from the last range starting at or before an address, so
  // among equal starts that unit is sorted last.
  std::sort(ranges.begin(), ranges.end(), [](const UnitRange& a, const UnitRange& b) {
    return a.lo != b.lo ? a.lo < b.lo : a.unit > b.unit;
  });
  max_hi.reserve(ranges.size());
  for (const UnitRange& range : ranges) {
    max_hi.push_back(max_hi.empty() ? range.hi : std::max(max_hi.back(), range.hi));
  }
  indexes.resize(units.size());
}

bool BinarySymbolizer::State::IsCompileUnit(uint32_t unit) {
  // Partial and type units hold no code of their own, whatever their
  // header says; nor does a GNU split-DWARF skeleton (DW_AT_GNU_dwo_id)
  // here, whose code is described in its .dwo file.
  if (compile_unit[unit] < 0) {
    Dwarf_Die& die = unit_dies[unit];
    compile_unit[unit] = dwarf_offdie(dwarf->get(), units[unit].die_offset, &die) != nullptr &&
                         dwarf_tag(&die) == DW_TAG_compile_unit &&
                         (units[unit].version >= 5 || dwarf_hasattr(&die, DW_AT_GNU_dwo_id) == 0);
  }
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

const std::string& BinarySymbolizer::State::SymbolName(const ElfSymbol& symbol) {
  const std::vector<ElfSymbol>& symbols = elf.symbols();
  if (&symbol < symbols.data() || &symbol >= symbols.data() + symbols.size()) {
    // Not one of ours: named, not kept.
    other_name = symbol.name();
    return other_name;
  }
  const auto index = static_cast<size_t>(&symbol - symbols.data());
  Named& slot = named[index % named.size()];
  if (slot.index != index) {
    slot.index = index;
    slot.name = symbol.name();
  }
  return slot.name;
}

const GoPclntab::FunctionTables* BinarySymbolizer::State::GoTablesAt(uint64_t vaddr) {
  const GoPclntab* go = elf.go_table();
  const GoPclntab::Function* function = go != nullptr ? go->FunctionAt(vaddr) : nullptr;
  if (function == nullptr) return nullptr;
  if (go_tables.empty()) go_tables.resize(256);
  GoPclntab::FunctionTables& slot =
      go_tables[static_cast<size_t>(function - go->functions().data()) % go_tables.size()];
  if (slot.function == function) return &slot;
  const auto steps = [](const GoPclntab::FunctionTables& t) {
    return t.file.size() + t.line.size() + t.inline_index.size();
  };
  go_table_steps -= steps(slot);
  slot = go->TablesOf(*function);
  // A byte budget (16 bytes a step): a crafted table's functions may each
  // claim a million steps.
  if (go_table_steps + steps(slot) > kMaxGoTableSteps) {
    for (GoPclntab::FunctionTables& other : go_tables) {
      if (&other != &slot) other = GoPclntab::FunctionTables{};
    }
    go_table_steps = 0;
  }
  go_table_steps += steps(slot);
  return &slot;
}

void BinarySymbolizer::State::NameFromElf(uint64_t vaddr, std::vector<SymbolFrame>* frames) {
  SymbolFrame* frame = &frames->back();
  const ElfSymbol* symbol = elf.Find(vaddr);
  if (symbol == nullptr) return;
  frame->function = SymbolName(*symbol);
  if (symbol->mangled.ends_with("@plt")) {
    frame->name_source = NameSource::kPlt;
    return;
  }
  frame->name_source = elf.has_symtab() ? NameSource::kSymtab : NameSource::kDynsym;
  // A stripped Go binary: its runtime's table names the function and,
  // without DWARF, the line and the calls inlined there.
  const GoPclntab::FunctionTables* tables = GoTablesAt(vaddr);
  if (tables == nullptr || tables->function->start != symbol->start) return;
  frame->name_source = NameSource::kGoPclntab;
  if (!frame->file.empty() || frames->size() != 1) return;
  frames->clear();
  for (const GoPclntab::Frame& go : elf.go_table()->FramesAt(*tables, vaddr)) {
    SymbolFrame& named = frames->emplace_back();
    named.function = go.function;
    named.name_source = NameSource::kGoPclntab;
    named.inlined = true;
    if (go.line) {
      named.file = go.line->file;
      named.line = go.line->line;
    }
  }
  frames->back().function = SymbolName(*symbol);
  frames->back().inlined = false;
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
  State::FdeStart& last = state_->last_fde_start;
  if (vaddr >= last.same.start && vaddr < last.same.end) return last.start;
  const CfiFunctions* cfi = state_->Cfi();
  if (cfi == nullptr) return std::nullopt;
  last.start = cfi->StartOf(vaddr, &last.same);
  return last.start;
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
  // (Whether or not a DWARF unit holds it: a unit without a row leaves
  // the Go table to give the frames.)
  if (const GoPclntab::FunctionTables* tables = state_->GoTablesAt(*vaddr)) {
    key.go = state_->elf.go_table()->KeyAt(*tables, *vaddr);
  }
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
  if (frames.back().function.empty()) state_->NameFromElf(vaddr, &frames);
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

const std::string& BinarySymbolizer::SymbolName(const ElfSymbol& symbol) {
  return state_->SymbolName(symbol);
}
const std::string& BinarySymbolizer::dwarf_path() const { return state_->dwarf_path; }
int BinarySymbolizer::dwarf_fd() const { return state_->dwarf ? state_->dwarf->fd() : -1; }
const std::string& BinarySymbolizer::dwarf_error() const { return state_->dwarf_error; }
size_t BinarySymbolizer::unit_count() const { return state_->units.size(); }
size_t BinarySymbolizer::indexed_unit_count() const { return state_->indexed; }

}  // namespace sample
