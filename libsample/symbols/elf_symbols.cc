#include "libsample/symbols/elf_symbols.h"

#include <elf.h>
#include <gelf.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/plt_stubs.h"

namespace sample {
namespace {

// A symbol before aliases are merged; `rank` orders which alias wins. The
// name stays in the file's string table until the winners' are copied out:
// the sort moves no strings, and 24 bytes a symbol (cc1plus has 31,000,
// and each page written first is a page fault).
struct RawSymbol {
  uint64_t start = 0;
  uint64_t size = 0;
  uint32_t name = 0;  // offset in the string table; mangled
  uint32_t length : 29 = 0;
  uint32_t rank : 2 = 0;
  uint32_t object : 1 = 0;
};
static_assert(sizeof(RawSymbol) == 24);
constexpr size_t kMaxNameLength = (size_t{1} << 29) - 1;
// Room kept for PLT stubs at most: a hint (a crafted file's PLT sections
// may claim far more entries than it has stubs).
constexpr size_t kMaxSpare = size_t{1} << 16;

// The function (or variable) symbols of one table, and its strings.
struct SymbolTable {
  std::vector<RawSymbol> raw;
  std::string_view strings;
  std::string_view NameOf(const RawSymbol& symbol) const {
    return strings.substr(symbol.name, symbol.length);
  }
};

uint32_t BindingRank(unsigned char binding) {
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
    // alias contest by its length), or one past any real name's length.
    if (length == strings.size() - sym.st_name || length == 0 || length > kMaxNameLength) {
      continue;
    }
    uint64_t start = sym.st_value;
    if (arm) start &= ~uint64_t{1};  // Thumb bit, not an address bit
    RawSymbol raw;
    raw.start = start;
    raw.size = sym.st_size;
    raw.name = static_cast<uint32_t>(sym.st_name);
    raw.length = static_cast<uint32_t>(length);
    raw.rank = BindingRank(sym.st_info >> 4);
    raw.object = type == STT_OBJECT;
    out->push_back(raw);
  }
}

SymbolTable ReadSymbols(Elf* elf, const GElf_Ehdr& ehdr, Elf_Scn* symtab, bool objects) {
  SymbolTable table;
  GElf_Shdr shdr;
  Elf_Data* data = elf_getdata(symtab, nullptr);
  if (gelf_getshdr(symtab, &shdr) == nullptr || data == nullptr || data->d_buf == nullptr) {
    return table;
  }
  Elf_Scn* strtab = elf_getscn(elf, shdr.sh_link);
  Elf_Data* string_data = strtab != nullptr ? elf_getdata(strtab, nullptr) : nullptr;
  if (string_data == nullptr || string_data->d_buf == nullptr) return table;
  // Offsets into it are 32 bits (st_name).
  table.strings = std::string_view(static_cast<const char*>(string_data->d_buf),
                                   std::min<size_t>(string_data->d_size, UINT32_MAX));
  const bool arm = ehdr.e_machine == EM_ARM;
  const bool is64 = gelf_getclass(elf) == ELFCLASS64;
  // At most one a table entry: no copy of the whole as the vector grows.
  table.raw.reserve(data->d_size / (is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym)));
  const std::span entries(static_cast<const std::byte*>(data->d_buf), data->d_size);
  if (is64) {
    ReadSymbolEntries<Elf64_Sym>(entries, table.strings, arm, objects, &table.raw);
  } else {
    ReadSymbolEntries<Elf32_Sym>(entries, table.strings, arm, objects, &table.raw);
  }
  return table;
}

// Symbols and the names they point into.
struct NamedSymbols {
  std::vector<ElfSymbol> symbols;
  std::shared_ptr<const std::string> names;
};

// Sorts by address and keeps one symbol per address: global over weak over
// local, then the shorter name. An alias with a size lends it to a winner
// without one. The winners are kept in `table.raw`'s first entries, then
// their names copied into one string, out of the file's string table. The
// symbols' vector has room for `spare` more (the PLT stubs).
NamedSymbols MergeAliases(SymbolTable table, size_t spare) {
  std::vector<RawSymbol>& raw = table.raw;
  std::sort(raw.begin(), raw.end(),
            [](const RawSymbol& x, const RawSymbol& y) { return x.start < y.start; });
  const auto better = [&table](const RawSymbol& a, const RawSymbol& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.length != b.length) return a.length < b.length;
    return table.NameOf(a) < table.NameOf(b);
  };
  size_t kept = 0;
  size_t name_bytes = 0;
  for (size_t i = 0; i < raw.size();) {
    size_t winner = i;
    size_t j = i + 1;
    for (; j < raw.size() && raw[j].start == raw[i].start; ++j) {
      if (better(raw[j], raw[winner])) winner = j;
    }
    // The size: the winner's, else that of the best alias that has one.
    const RawSymbol* sized = raw[winner].size != 0 ? &raw[winner] : nullptr;
    for (size_t k = i; raw[winner].size == 0 && k < j; ++k) {
      if (raw[k].size != 0 && (sized == nullptr || better(raw[k], *sized))) sized = &raw[k];
    }
    RawSymbol kept_symbol = raw[winner];
    kept_symbol.size = sized != nullptr ? sized->size : 0;
    raw[kept++] = kept_symbol;  // kept <= i: no group still to be read is written
    name_bytes += kept_symbol.length;
    i = j;
  }
  raw.resize(kept);
  NamedSymbols out;
  out.symbols.reserve(raw.size() + std::min<size_t>(spare, kMaxSpare));
  auto names = std::make_shared<std::string>();
  if (name_bytes > table.strings.size()) {
    // Names shared by many symbols (a crafted file's): the table itself,
    // copied once, so that what is kept stays within the file's size.
    names->assign(table.strings);
    for (const RawSymbol& symbol : raw) {
      out.symbols.push_back(ElfSymbol{symbol.start, symbol.size,
                                      std::string_view(*names).substr(symbol.name, symbol.length),
                                      symbol.object != 0});
    }
    out.names = std::move(names);
    return out;
  }
  names->reserve(name_bytes);
  for (const RawSymbol& symbol : raw) names->append(table.NameOf(symbol));
  const std::string_view all(*names);
  size_t at = 0;
  for (const RawSymbol& symbol : raw) {
    out.symbols.push_back(
        ElfSymbol{symbol.start, symbol.size, all.substr(at, symbol.length), symbol.object != 0});
    at += symbol.length;
  }
  out.names = std::move(names);
  return out;
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
  result.build_id_ = ReadElfBuildId(file);
  return result;
}

void ElfSymbols::ReadOwnSymbols(const ElfFile& file, bool objects) {
  SymbolTable table;
  Elf_Scn* symtab = FindElfSectionOfType(file.get(), SHT_SYMTAB);
  has_symtab_ = symtab != nullptr;
  if (symtab == nullptr) symtab = FindElfSectionOfType(file.get(), SHT_DYNSYM);
  if (symtab != nullptr) table = ReadSymbols(file.get(), file.ehdr(), symtab, objects);
  NamedSymbols merged =
      MergeAliases(std::move(table), objects ? 0 : PltEntryCount(file.get(), file.ehdr()));
  symbols_ = std::move(merged.symbols);
  names_.push_back(std::move(merged.names));
  if (!has_symtab_ && !objects) AddGoFunctions(file);
}

namespace {

std::span<const std::byte> SectionBytes(Elf_Scn* section, GElf_Shdr* header) {
  Elf_Data* data = gelf_getshdr(section, header) != nullptr && header->sh_type == SHT_PROGBITS
                       ? elf_rawdata(section, nullptr)
                       : nullptr;
  if (data == nullptr || data->d_buf == nullptr) return {};
  return std::span(static_cast<const std::byte*>(data->d_buf), data->d_size);
}

// Go 1.18 and later: the inline trees, in go:func.*, whose address the
// runtime's module data (in a writable data section) holds; a PIE's holds
// the link-time addresses too (its relocations' addends).
void AttachGoFuncData(Elf* elf, uint64_t table_address, GoPclntab* table) {
  std::optional<uint64_t> gofunc;
  GElf_Shdr header;
  for (Elf_Scn* scn = nullptr; !gofunc && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    const std::span<const std::byte> bytes = SectionBytes(scn, &header);
    if ((header.sh_flags & SHF_WRITE) != 0 && !bytes.empty()) {
      gofunc = table->FindGoFunc(bytes, table_address);
    }
  }
  for (Elf_Scn* scn = nullptr; gofunc && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    const std::span<const std::byte> bytes = SectionBytes(scn, &header);
    if ((header.sh_flags & SHF_ALLOC) != 0 && *gofunc >= header.sh_addr &&
        *gofunc - header.sh_addr < bytes.size()) {
      table->AttachFuncData(bytes.subspan(*gofunc - header.sh_addr));
      return;
    }
  }
}

}  // namespace

std::optional<GoPclntab> ReadGoPclntab(const ElfFile& file) {
  // A PIE's is .data.rel.ro.gopclntab (the loader relocates its header).
  Elf_Scn* section = FindElfSection(file.get(), ".gopclntab");
  if (section == nullptr) section = FindElfSection(file.get(), ".data.rel.ro.gopclntab");
  GElf_Shdr header;
  const std::span<const std::byte> bytes =
      section != nullptr ? SectionBytes(section, &header) : std::span<const std::byte>();
  if (bytes.empty()) return std::nullopt;
  uint64_t text_start = 0;
  GElf_Shdr text;
  if (Elf_Scn* text_section = FindElfSection(file.get(), ".text");
      text_section != nullptr && gelf_getshdr(text_section, &text) != nullptr) {
    text_start = text.sh_addr;
  }
  auto table = GoPclntab::Parse(bytes, text_start);
  if (!table || table->functions().empty()) return std::nullopt;
  AttachGoFuncData(file.get(), header.sh_addr, &*table);
  return std::move(*table);
}

void ElfSymbols::AddGoFunctions(const ElfFile& file) {
  std::optional<GoPclntab> table = ReadGoPclntab(file);
  if (!table) return;
  go_table_ = std::make_shared<const GoPclntab>(std::move(*table));
  // The names view the table's bytes: a names_ entry sharing its ownership.
  names_.push_back(std::shared_ptr<const std::string>(go_table_, &go_table_->bytes()));
  std::vector<ElfSymbol> merged;
  merged.reserve(go_table_->functions().size() + symbols_.size());
  for (const GoPclntab::Function& f : go_table_->functions()) {
    merged.push_back(ElfSymbol{f.start, f.end - f.start, f.name, false});
  }
  merged.insert(merged.end(), symbols_.begin(), symbols_.end());
  const auto by_start = [](const ElfSymbol& a, const ElfSymbol& b) { return a.start < b.start; };
  std::stable_sort(merged.begin(), merged.end(), by_start);
  merged.erase(
      std::unique(merged.begin(), merged.end(),
                  [](const ElfSymbol& a, const ElfSymbol& b) { return a.start == b.start; }),
      merged.end());
  symbols_ = std::move(merged);
}

void ElfSymbols::AddStubs(const ElfFile& file) {
  const size_t sorted = symbols_.size();
  const std::vector<PltStub> found = FindPltStubs(file.get(), file.ehdr(), symbols_);
  if (found.empty()) return;
  auto names = std::make_shared<std::string>();
  size_t name_bytes = 0;
  for (const PltStub& stub : found) name_bytes += stub.name.size();
  names->reserve(name_bytes);
  for (const PltStub& stub : found) names->append(stub.name);
  const std::string_view all(*names);
  symbols_.reserve(symbols_.size() + found.size());
  size_t at = 0;
  for (const PltStub& stub : found) {
    symbols_.push_back(ElfSymbol{stub.start, stub.size, all.substr(at, stub.name.size()), false});
    at += stub.name.size();
  }
  names_.push_back(std::move(names));
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
  const std::string debug_id = ReadElfBuildId(debug);
  if (!result.build_id_.empty() && !debug_id.empty() && result.build_id_ != debug_id) {
    return Fail(fmt::format("{}: build-id {} does not match {} of {}", debug_path, debug_id,
                            result.build_id_, path));
  }
  // The binary's own symbols are read only when the debug file has none:
  // its .symtab is a superset of them (and of .dynsym).
  if (Elf_Scn* symtab = FindElfSectionOfType(debug.get(), SHT_SYMTAB)) {
    NamedSymbols merged = MergeAliases(ReadSymbols(debug.get(), debug.ehdr(), symtab, false),
                                       PltEntryCount(file.get(), file.ehdr()));
    result.symbols_ = std::move(merged.symbols);
    result.names_.push_back(std::move(merged.names));
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

void ElfSymbols::MergeDebugSymbols(ElfSymbols debug) {
  if (!debug.has_symtab_) return;
  std::vector<ElfSymbol> merged = std::move(debug.symbols_);
  const size_t debug_count = merged.size();
  for (const ElfSymbol& own : symbols_) {
    if (own.mangled.ends_with("@plt")) merged.push_back(own);
  }
  // The stubs' names stay where they are.
  names_.insert(names_.end(), debug.names_.begin(), debug.names_.end());
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
