#include "libsample/symbols/elf_symbols.h"

#include <elf.h>
#include <gelf.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/plt_stubs.h"

namespace sample {
namespace {

// Go's linker writes its build ID (the hashes of the build's inputs and
// output, "actionID/contentID") as a note of its own, not NT_GNU_BUILD_ID,
// its owner "Go" padded with NULs to 4 bytes (n_namesz 4).
constexpr char kGoNoteOwner[] = "Go\0";
constexpr uint32_t kGoBuildIdNote = 4;

// The note `type` of `owner` in one block of notes as hex, if there is one.
std::optional<std::string> NoteInNotes(Elf_Data* data, const char* owner, size_t owner_size,
                                       uint32_t type) {
  if (data == nullptr || data->d_buf == nullptr) return std::nullopt;
  const auto* base = static_cast<const unsigned char*>(data->d_buf);
  GElf_Nhdr nhdr;
  size_t name_offset = 0;
  size_t desc_offset = 0;
  size_t offset = 0;
  while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
    if (nhdr.n_type == type && nhdr.n_namesz == owner_size &&
        std::memcmp(base + name_offset, owner, owner_size) == 0) {
      return HexBytes(std::as_bytes(std::span(base + desc_offset, nhdr.n_descsz)));
    }
  }
  return std::nullopt;
}

// The NT_GNU_BUILD_ID in one block of notes, if there is one.
std::optional<std::string> BuildIdInNotes(Elf_Data* data) {
  return NoteInNotes(data, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU), NT_GNU_BUILD_ID);
}

// Looks in the SHT_NOTE sections; a file without any (section headers
// stripped, or never written) is searched through its PT_NOTE segments.
std::string FindBuildId(Elf* elf) {
  bool saw_note_section = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    saw_note_section = true;
    if (auto id = BuildIdInNotes(elf_getdata(scn, nullptr))) return *id;
  }
  if (saw_note_section) return "";
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return "";
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_NOTE) {
      continue;
    }
    // Notes aligned to 8 use the 8-byte-padded layout (gABI); libelf needs
    // the matching type to walk them.
    const Elf_Type type = phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
    if (auto id = BuildIdInNotes(
            elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, type))) {
      return *id;
    }
  }
  return "";
}

// A symbol before aliases are merged; `rank` orders which alias wins. The
// name stays in the file's string table until a winner is demangled: the
// sort moves no strings (libc's debug file has 10,000 symbols).
struct RawSymbol {
  uint64_t start = 0;
  uint64_t size = 0;
  int rank = 0;
  std::string_view name;  // mangled; in the ELF file's string table
  bool object = false;
};

int BindingRank(unsigned char binding) {
  switch (binding) {
    case STB_GLOBAL:
      return 0;
    case STB_WEAK:
      return 1;
    case STB_LOCAL:
      return 2;
    default:
      return 3;
  }
}

// Appends the STT_FUNC and STT_GNU_IFUNC symbols defined in `symtab`;
// with `objects`, the STT_OBJECT ones (variables) too. Reads the entries
// and the string table where libelf holds them (no gelf_getsym copy, no
// elf_strptr check a symbol): libc's debug file has 10,000 of them, read
// at every recording's close.
template <typename Sym>
void ReadSymbolEntries(std::span<const std::byte> entries, std::string_view strings, bool arm,
                       bool objects, std::vector<RawSymbol>* out) {
  for (size_t at = 0; at + sizeof(Sym) <= entries.size(); at += sizeof(Sym)) {
    Sym sym;  // copied: a crafted file's table need not be aligned
    std::memcpy(&sym, entries.data() + at, sizeof(Sym));
    const unsigned char type = sym.st_info & 0xf;  // ELF*_ST_TYPE: the same for both classes
    if (type != STT_FUNC && type != STT_GNU_IFUNC && !(objects && type == STT_OBJECT)) continue;
    if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
    if (sym.st_name == 0 || sym.st_name >= strings.size()) continue;
    const char* name = strings.data() + sym.st_name;
    const size_t length = strnlen(name, strings.size() - sym.st_name);
    // No NUL before the end, or an empty name (which would win every
    // alias contest by its length).
    if (length == strings.size() - sym.st_name || length == 0) continue;
    uint64_t start = sym.st_value;
    if (arm) start &= ~uint64_t{1};  // Thumb bit, not an address bit
    out->push_back(RawSymbol{start, sym.st_size, BindingRank(sym.st_info >> 4),
                             std::string_view(name, length), type == STT_OBJECT});
  }
}

void ReadSymbols(Elf* elf, const GElf_Ehdr& ehdr, Elf_Scn* symtab, bool objects,
                 std::vector<RawSymbol>* out) {
  GElf_Shdr shdr;
  Elf_Data* data = elf_getdata(symtab, nullptr);
  if (gelf_getshdr(symtab, &shdr) == nullptr || data == nullptr || data->d_buf == nullptr) return;
  Elf_Scn* strtab = elf_getscn(elf, shdr.sh_link);
  Elf_Data* string_data = strtab != nullptr ? elf_getdata(strtab, nullptr) : nullptr;
  if (string_data == nullptr || string_data->d_buf == nullptr) return;
  const std::string_view strings(static_cast<const char*>(string_data->d_buf), string_data->d_size);
  const bool arm = ehdr.e_machine == EM_ARM;
  out->reserve(out->size() + data->d_size / sizeof(Elf32_Sym) / 2);
  const std::span entries(static_cast<const std::byte*>(data->d_buf), data->d_size);
  if (gelf_getclass(elf) == ELFCLASS64) {
    ReadSymbolEntries<Elf64_Sym>(entries, strings, arm, objects, out);
  } else {
    ReadSymbolEntries<Elf32_Sym>(entries, strings, arm, objects, out);
  }
}

// Sorts by address and keeps one symbol per address: global over weak over
// local, then the shorter name. An alias with a size lends it to a winner
// without one. Sorts (address, index) pairs by address alone, then picks
// each address's winner: the sort compares integers only.
std::vector<ElfSymbol> MergeAliases(const std::vector<RawSymbol>& raw) {
  std::vector<std::pair<uint64_t, uint32_t>> order;
  order.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) order.emplace_back(raw[i].start, i);
  std::sort(order.begin(), order.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  const auto better = [](const RawSymbol& a, const RawSymbol& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.name.size() != b.name.size()) return a.name.size() < b.name.size();
    return a.name < b.name;
  };
  std::vector<ElfSymbol> symbols;
  symbols.reserve(order.size());
  for (size_t i = 0; i < order.size();) {
    const RawSymbol* winner = &raw[order[i].second];
    size_t j = i + 1;
    for (; j < order.size() && order[j].first == order[i].first; ++j) {
      const RawSymbol& alias = raw[order[j].second];
      if (better(alias, *winner)) winner = &alias;
    }
    // The size: the winner's, else that of the best alias that has one.
    const RawSymbol* sized = winner->size != 0 ? winner : nullptr;
    for (size_t k = i; winner->size == 0 && k < j; ++k) {
      const RawSymbol& alias = raw[order[k].second];
      if (alias.size != 0 && (sized == nullptr || better(alias, *sized))) sized = &alias;
    }
    const uint64_t size = sized != nullptr ? sized->size : 0;
    symbols.push_back(ElfSymbol{winner->start, size, Demangle(winner->name), winner->object});
    i = j;
  }
  return symbols;
}

}  // namespace

Result<ElfSymbols> ElfSymbols::Load(const std::string& path) { return LoadOwn(path, false); }

Result<ElfSymbols> ElfSymbols::LoadWithObjects(const std::string& path) {
  return LoadOwn(path, true);
}

Result<ElfSymbols> ElfSymbols::ReadLayout(const std::string& path, const ElfFile& file) {
  Elf* elf = file.get();
  ElfSymbols result;
  result.fixed_address_ = file.ehdr().e_type == ET_EXEC;
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) {
    return Fail(fmt::format("{}: cannot read program headers: {}", path, elf_errmsg(-1)));
  }
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) {
      continue;
    }
    result.segments_.push_back(LoadSegment{phdr.p_offset, phdr.p_filesz, phdr.p_vaddr, phdr.p_memsz,
                                           (phdr.p_flags & PF_X) != 0});
  }
  result.build_id_ = FindBuildId(elf);
  return result;
}

void ElfSymbols::ReadOwnSymbols(const ElfFile& file, bool objects) {
  std::vector<RawSymbol> raw;
  Elf_Scn* symtab = FindElfSectionOfType(file.get(), SHT_SYMTAB);
  has_symtab_ = symtab != nullptr;
  if (symtab == nullptr) symtab = FindElfSectionOfType(file.get(), SHT_DYNSYM);
  if (symtab != nullptr) ReadSymbols(file.get(), file.ehdr(), symtab, objects, &raw);
  symbols_ = MergeAliases(raw);
}

void ElfSymbols::AddStubs(const ElfFile& file) {
  const size_t sorted = symbols_.size();
  AddPltStubs(file.get(), file.ehdr(), &symbols_);
  // A real symbol at a stub's address (there should be none) wins: the
  // stubs are sorted, then merged in after the symbols of their address.
  const auto by_start = [](const ElfSymbol& a, const ElfSymbol& b) { return a.start < b.start; };
  const auto stubs = symbols_.begin() + static_cast<ptrdiff_t>(sorted);
  std::stable_sort(stubs, symbols_.end(), by_start);
  std::inplace_merge(symbols_.begin(), stubs, symbols_.end(), by_start);
  symbols_.erase(
      std::unique(symbols_.begin(), symbols_.end(),
                  [](const ElfSymbol& a, const ElfSymbol& b) { return a.start == b.start; }),
      symbols_.end());
}

Result<ElfSymbols> ElfSymbols::LoadOwn(const std::string& path, bool objects) {
  TRY_ASSIGN(auto file, ElfFile::Open(path));
  TRY_ASSIGN(auto result, ReadLayout(path, file));
  result.ReadOwnSymbols(file, objects);
  if (!objects) result.AddStubs(file);
  return result;
}

Result<ElfSymbols> ElfSymbols::Load(const std::string& path, const std::string& debug_path) {
  if (debug_path.empty()) return LoadOwn(path, false);
  TRY_ASSIGN(auto file, ElfFile::Open(path));
  TRY_ASSIGN(auto debug, ElfFile::Open(debug_path));
  TRY_ASSIGN(auto result, ReadLayout(path, file));
  // A debug file of another build would name the wrong functions.
  const std::string debug_id = FindBuildId(debug.get());
  if (!result.build_id_.empty() && !debug_id.empty() && result.build_id_ != debug_id) {
    return Fail(fmt::format("{}: build-id {} does not match {} of {}", debug_path, debug_id,
                            result.build_id_, path));
  }
  // The binary's own symbols are read only when the debug file has none:
  // its .symtab is a superset of them (and of .dynsym).
  if (Elf_Scn* symtab = FindElfSectionOfType(debug.get(), SHT_SYMTAB)) {
    std::vector<RawSymbol> raw;
    ReadSymbols(debug.get(), debug.ehdr(), symtab, false, &raw);
    result.symbols_ = MergeAliases(raw);
    result.has_symtab_ = true;
  } else {
    result.ReadOwnSymbols(file, false);
  }
  result.AddStubs(file);
  return result;
}

std::optional<uint64_t> ElfSymbols::FileOffsetToVaddr(uint64_t file_offset) const {
  // Samples come from executable mappings, so an executable segment wins if
  // two segments' file ranges share the offset.
  for (bool executable : {true, false}) {
    for (const LoadSegment& segment : segments_) {
      if (segment.executable != executable || file_offset < segment.offset) continue;
      const uint64_t delta = file_offset - segment.offset;
      if (delta < segment.filesz) return segment.vaddr + delta;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ElfSymbols::VaddrToFileOffset(uint64_t vaddr) const {
  for (bool executable : {true, false}) {
    for (const LoadSegment& segment : segments_) {
      if (segment.executable != executable || vaddr < segment.vaddr) continue;
      const uint64_t delta = vaddr - segment.vaddr;
      if (delta < segment.filesz) return segment.offset + delta;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ElfSymbols::ExecutableSegmentEnd(uint64_t vaddr) const {
  for (const LoadSegment& segment : segments_) {
    if (segment.executable && vaddr >= segment.vaddr && vaddr - segment.vaddr < segment.memsz) {
      return segment.vaddr + segment.memsz;
    }
  }
  return std::nullopt;
}

const ElfSymbol* ElfSymbols::Find(uint64_t vaddr, uint64_t* end_out) const {
  auto next = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                               [](uint64_t v, const ElfSymbol& s) { return v < s.start; });
  if (next == symbols_.begin()) return nullptr;
  const ElfSymbol& symbol = *std::prev(next);
  if (symbol.size != 0) {
    if (vaddr - symbol.start >= symbol.size) return nullptr;
    if (end_out != nullptr) *end_out = symbol.start + symbol.size;
    return &symbol;
  }

  // Size unknown: up to the next symbol, clipped to the executable segment.
  const std::optional<uint64_t> segment_end = ExecutableSegmentEnd(symbol.start);
  uint64_t end = symbol.start + 1;
  if (next != symbols_.end() && segment_end) {
    end = std::min(next->start, *segment_end);
  } else if (next != symbols_.end()) {
    end = next->start;
  } else if (segment_end) {
    end = *segment_end;
  }
  if (vaddr >= end) return nullptr;
  if (end_out != nullptr) *end_out = end;
  return &symbol;
}

Result<std::string> ReadElfBuildId(const std::string& path) {
  TRY_ASSIGN(auto file, ElfFile::Open(path));
  return FindBuildId(file.get());
}

std::string ReadElfBuildId(const ElfFile& file) { return FindBuildId(file.get()); }

std::string ReadGoBuildId(const ElfFile& file) {
  Elf* elf = file.get();
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    if (auto id = NoteInNotes(elf_getdata(scn, nullptr), kGoNoteOwner, sizeof(kGoNoteOwner),
                              kGoBuildIdNote)) {
      return *id;
    }
  }
  return "";
}

}  // namespace sample

namespace sample {

void ElfSymbols::MergeDebugSymbols(ElfSymbols debug) {
  if (!debug.has_symtab_) return;
  std::vector<ElfSymbol> merged = std::move(debug.symbols_);
  const size_t debug_count = merged.size();
  for (ElfSymbol& own : symbols_) {
    if (own.name.size() > 4 && own.name.compare(own.name.size() - 4, 4, "@plt") == 0) {
      merged.push_back(std::move(own));
    }
  }
  // One symbol per address: the debug file's name wins over a stub's. Both
  // lists are sorted already: a merge keeps the debug file's first.
  std::inplace_merge(merged.begin(), merged.begin() + static_cast<ptrdiff_t>(debug_count),
                     merged.end(),
                     [](const ElfSymbol& a, const ElfSymbol& b) { return a.start < b.start; });
  merged.erase(
      std::unique(merged.begin(), merged.end(),
                  [](const ElfSymbol& a, const ElfSymbol& b) { return a.start == b.start; }),
      merged.end());
  symbols_ = std::move(merged);
  has_symtab_ = true;
}

}  // namespace sample
