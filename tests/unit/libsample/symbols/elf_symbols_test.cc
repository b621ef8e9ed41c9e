// Tests for ElfSymbols against small ELF files built by tests/fixtures/ with
// known functions, aliases, PLT calls and layouts. Where a test needs ground
// truth (load layout, PLT slots), it reads the file with tests/fixtures/raw_elf.h
// rather than through the code under test.
#include "libsample/symbols/elf_symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/symbols/elf_file.h"
#include "tests/fixtures/raw_elf.h"

namespace sample {
namespace {

using fixtures::ExecutableLoadFor;
using fixtures::RawElf;
using fixtures::RawGotSlotNames;
using fixtures::RawLoad;
using fixtures::RawPltSlot;
using fixtures::ReadRawElf;
using fixtures::ReadWholeFile;
using fixtures::WriteWholeFile;

const char* const kProg = FIXTURE_PROG_PATH;
const char* const kProgDebug = FIXTURE_PROG_DEBUG_PATH;
const char* const kProgNoBuildId = FIXTURE_PROG_NOBUILDID_PATH;
const char* const kProgStripped = FIXTURE_PROG_STRIPPED_PATH;
const char* const kLib = FIXTURE_LIB_PATH;
const char* const kLibStripped = FIXTURE_LIB_STRIPPED_PATH;
#ifdef FIXTURE_PROG_IBT_PATH
// fixture_prog with .plt.sec (x86_64 IBT); only built on x86_64.
const char* const kProgIbt = FIXTURE_PROG_IBT_PATH;
#endif

// The fixtures with PLT calls to puts and getenv.
std::vector<const char*> ProgsWithPlt() {
  std::vector<const char*> paths = {kProg, kProgStripped};
#ifdef FIXTURE_PROG_IBT_PATH
  paths.push_back(kProgIbt);
#endif
  return paths;
}

const ElfSymbol* FindByName(const ElfSymbols& elf, std::string_view name) {
  for (const ElfSymbol& symbol : elf.symbols()) {
    if (symbol.name() == name) return &symbol;
  }
  return nullptr;
}

std::string NameOrNull(const ElfSymbol* symbol) {
  return symbol == nullptr ? "(null)" : symbol->name();
}

#define ASSERT_LOADED(var, path)                             \
  auto var##_result = ElfSymbols::Load(path);                \
  ASSERT_TRUE(var##_result) << var##_result.error().message; \
  const ElfSymbols& var = *var##_result

bool IsLowerHex(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(DemangleTest, DemanglesCxxNames) {
  EXPECT_EQ(Demangle("_ZN2ns3Foo3barEi"), "ns::Foo::bar(int)");
  EXPECT_EQ(Demangle("_Z5twiceIiET_S0_"), "int twice<int>(int)");
  EXPECT_EQ(Demangle("_ZL13static_helperi"), "static_helper(int)");
}

TEST(DemangleTest, KeepsSuffixAfterAt) {
  EXPECT_EQ(Demangle("_ZN2ns3Lib7computeEi@plt"), "ns::Lib::compute(int)@plt");
  EXPECT_EQ(Demangle("puts@plt"), "puts@plt");
}

TEST(DemangleTest, ReturnsOtherNamesUnchanged) {
  EXPECT_EQ(Demangle("main"), "main");
  EXPECT_EQ(Demangle(""), "");
  EXPECT_EQ(Demangle("_Z"), "_Z");
  EXPECT_EQ(Demangle("_Znot_a_valid_name!"), "_Znot_a_valid_name!");
}

TEST(ElfSymbolsTest, SymtabNamesAreDemangled) {
  for (const char* path : {kProg, kProgDebug}) {
    SCOPED_TRACE(path);
    ASSERT_LOADED(elf, path);
    EXPECT_TRUE(elf.has_symtab());
    for (const char* name : {"main", "ns::Foo::bar(int)", "int twice<int>(int)",
                             "static_helper(int)", "nosize_asm", "puts@plt"}) {
      EXPECT_NE(FindByName(elf, name), nullptr) << name;
    }
    EXPECT_EQ(FindByName(elf, "_ZN2ns3Foo3barEi"), nullptr);
  }
}

TEST(ElfSymbolsTest, SymbolsAreSortedWithOnePerAddress) {
  ASSERT_LOADED(elf, kProg);
  ASSERT_FALSE(elf.symbols().empty());
  for (size_t i = 1; i < elf.symbols().size(); ++i) {
    EXPECT_LT(elf.symbols()[i - 1].start, elf.symbols()[i].start) << elf.symbols()[i].name();
  }
}

TEST(ElfSymbolsTest, FindRespectsSymbolSize) {
  ASSERT_LOADED(elf, kProg);
  for (const char* name : {"ns::Foo::bar(int)", "int twice<int>(int)", "static_helper(int)"}) {
    SCOPED_TRACE(name);
    const ElfSymbol* symbol = FindByName(elf, name);
    ASSERT_NE(symbol, nullptr);
    ASSERT_GT(symbol->size, 0u);
    const uint64_t end = symbol->start + symbol->size;
    EXPECT_EQ(elf.Find(symbol->start), symbol);
    EXPECT_EQ(elf.Find(end - 1), symbol);
    // Past the end: the symbol that starts there, if any, else nothing.
    const ElfSymbol* at_end = nullptr;
    for (const ElfSymbol& other : elf.symbols()) {
      if (other.start == end) at_end = &other;
    }
    EXPECT_EQ(elf.Find(end), at_end) << NameOrNull(elf.Find(end));
  }
  // Every sized symbol owns its first and last byte.
  for (const ElfSymbol& symbol : elf.symbols()) {
    if (symbol.size == 0) continue;
    EXPECT_EQ(elf.Find(symbol.start), &symbol) << symbol.name();
    EXPECT_EQ(elf.Find(symbol.start + symbol.size - 1), &symbol) << symbol.name();
  }
  EXPECT_EQ(elf.Find(0), nullptr);
  EXPECT_EQ(elf.Find(~uint64_t{0}), nullptr);
}

TEST(ElfSymbolsTest, SizeZeroSymbolCoversUpToNextSymbol) {
  ASSERT_LOADED(elf, kProg);
  const ElfSymbol* symbol = FindByName(elf, "nosize_asm");
  ASSERT_NE(symbol, nullptr);
  EXPECT_EQ(symbol->size, 0u);
  const auto it = elf.symbols().begin() + (symbol - elf.symbols().data());
  ASSERT_NE(std::next(it), elf.symbols().end());
  const ElfSymbol& next = *std::next(it);
  EXPECT_EQ(elf.Find(symbol->start), symbol);
  EXPECT_EQ(elf.Find(symbol->start + 1), symbol);
  EXPECT_EQ(elf.Find(next.start - 1), symbol);
  EXPECT_EQ(elf.Find(next.start), &next);
}

TEST(ElfSymbolsTest, SizeZeroSymbolStopsAtEndOfExecutableSegment) {
  ASSERT_LOADED(elf, kProg);
  const RawElf raw = ReadRawElf(kProg);
  // The last function of the executable segment is _fini (crti.o), which has
  // no size; what follows is read-only data with no function symbols.
  const ElfSymbol* fini = FindByName(elf, "_fini");
  ASSERT_NE(fini, nullptr);
  ASSERT_EQ(fini->size, 0u);
  const std::optional<RawLoad> text = ExecutableLoadFor(raw, fini->start);
  ASSERT_TRUE(text);
  const uint64_t segment_end = text->vaddr + text->memsz;
  EXPECT_EQ(elf.Find(fini->start), fini);
  EXPECT_EQ(elf.Find(segment_end - 1), fini);
  EXPECT_EQ(elf.Find(segment_end), nullptr) << NameOrNull(elf.Find(segment_end));
  EXPECT_EQ(elf.Find(segment_end + 0x100000), nullptr);
}

TEST(ElfSymbolsTest, AliasesKeepOneNameByBindingThenLength) {
  ASSERT_LOADED(elf, kProg);
  // Global over local, though the global's name is longer.
  EXPECT_NE(FindByName(elf, "global_alias"), nullptr);
  EXPECT_EQ(FindByName(elf, "local_impl"), nullptr);
  // Global over weak, though the weak name is shorter.
  EXPECT_NE(FindByName(elf, "global_longer_name"), nullptr);
  EXPECT_EQ(FindByName(elf, "w"), nullptr);
  // Two globals: the shorter name.
  const ElfSymbol* ab = FindByName(elf, "ab");
  ASSERT_NE(ab, nullptr);
  EXPECT_EQ(FindByName(elf, "long_global_name"), nullptr);
  EXPECT_GT(ab->size, 0u);
  EXPECT_EQ(elf.Find(ab->start), ab);
}

// fixture_prog's bytes, to patch (a 64-bit ELF file).
struct ProgImage {
  std::vector<char> bytes;
  Elf64_Ehdr ehdr{};
  Elf64_Shdr Section(size_t i) const {
    Elf64_Shdr out;
    std::memcpy(&out, bytes.data() + ehdr.e_shoff + i * ehdr.e_shentsize, sizeof(out));
    return out;
  }
};

bool ReadProgImage(ProgImage* image) {
  image->bytes = fixtures::ReadWholeFile(kProg);
  if (image->bytes.size() < sizeof(Elf64_Ehdr)) return false;
  std::memcpy(&image->ehdr, image->bytes.data(), sizeof(image->ehdr));
  return image->ehdr.e_ident[EI_CLASS] == ELFCLASS64;
}

// `bytes` loaded from a temporary file named after `name`.
Result<ElfSymbols> LoadBytes(const std::vector<char>& bytes, const std::string& name) {
  const std::string path = ::testing::TempDir() + name + "." + std::to_string(getpid());
  fixtures::WriteWholeFile(path, bytes);
  auto elf = ElfSymbols::Load(path);
  std::remove(path.c_str());
  return elf;
}

// A symbol whose name is empty (its st_name at some NUL of the string
// table, as a crafted file may have) is left out: by its length it would
// win every alias contest.
TEST(ElfSymbolsTest, EmptyNamedAliasIsLeftOut) {
  ProgImage image;
  ASSERT_TRUE(ReadProgImage(&image));
  std::vector<char>& bytes = image.bytes;
  const Elf64_Ehdr& ehdr = image.ehdr;
  const auto shdr = [&](size_t i) { return image.Section(i); };
  bool patched = false;
  for (size_t i = 0; i < ehdr.e_shnum && !patched; ++i) {
    const Elf64_Shdr symtab = shdr(i);
    if (symtab.sh_type != SHT_SYMTAB) continue;
    const Elf64_Shdr strtab = shdr(symtab.sh_link);
    for (uint64_t at = symtab.sh_offset;
         at + sizeof(Elf64_Sym) <= symtab.sh_offset + symtab.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, bytes.data() + at, sizeof(sym));
      const char* name = bytes.data() + strtab.sh_offset + sym.st_name;
      if (std::string_view(name) != "long_global_name") continue;
      sym.st_name += static_cast<uint32_t>(std::strlen(name));  // its own NUL
      std::memcpy(bytes.data() + at, &sym, sizeof(sym));
      patched = true;
    }
  }
  ASSERT_TRUE(patched);
  auto elf = LoadBytes(bytes, "empty_named_alias");
  ASSERT_TRUE(elf) << elf.error().message;
  const ElfSymbol* ab = FindByName(*elf, "ab");
  ASSERT_NE(ab, nullptr);
  EXPECT_EQ(FindByName(*elf, ""), nullptr);
}

// Every function named by one string (a crafted file's sharing): their
// names add up to more than the string table, which is then kept whole
// (bounded by the file) with each symbol's view into it.
TEST(ElfSymbolsTest, NamesSharedByManySymbolsStayRight) {
  ProgImage image;
  ASSERT_TRUE(ReadProgImage(&image));
  std::vector<char>& bytes = image.bytes;
  const Elf64_Ehdr& ehdr = image.ehdr;
  const auto shdr = [&](size_t i) { return image.Section(i); };
  std::string longest;
  size_t functions = 0;
  uint64_t strtab_size = 0;
  for (size_t i = 0; i < ehdr.e_shnum; ++i) {
    const Elf64_Shdr symtab = shdr(i);
    if (symtab.sh_type != SHT_SYMTAB) continue;
    const Elf64_Shdr strtab = shdr(symtab.sh_link);
    strtab_size = strtab.sh_size;
    // The longest name in the table, at its own offset.
    uint32_t longest_at = 0;
    for (uint64_t at = 1; at < strtab.sh_size;
         at += std::strlen(bytes.data() + strtab.sh_offset + at) + 1) {
      const std::string_view name(bytes.data() + strtab.sh_offset + at);
      if (name.size() > longest.size()) {
        longest = name;
        longest_at = static_cast<uint32_t>(at);
      }
    }
    for (uint64_t at = symtab.sh_offset;
         at + sizeof(Elf64_Sym) <= symtab.sh_offset + symtab.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, bytes.data() + at, sizeof(sym));
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
          sym.st_value == 0) {
        continue;
      }
      sym.st_name = longest_at;
      std::memcpy(bytes.data() + at, &sym, sizeof(sym));
      ++functions;
    }
  }
  ASSERT_GT(functions * longest.size(), strtab_size) << "the fixture no longer makes the case";
  auto elf = LoadBytes(bytes, "shared_names");
  ASSERT_TRUE(elf) << elf.error().message;
  size_t named = 0;
  for (const ElfSymbol& symbol : elf->symbols()) {
    if (symbol.mangled.ends_with("@plt")) continue;
    EXPECT_EQ(symbol.mangled, longest);
    EXPECT_EQ(symbol.name(), Demangle(longest));
    ++named;
  }
  EXPECT_GT(named, 10u);
}

TEST(ElfSymbolsTest, PltStubsAreNamed) {
  for (const char* path : ProgsWithPlt()) {
    SCOPED_TRACE(path);
    ASSERT_LOADED(elf, path);
    for (const char* name : {"puts@plt", "getenv@plt"}) {
      const ElfSymbol* stub = FindByName(elf, name);
      ASSERT_NE(stub, nullptr) << name;
      EXPECT_EQ(stub->size, 16u);
      EXPECT_EQ(elf.Find(stub->start), stub);
      EXPECT_EQ(elf.Find(stub->start + 15), stub);
    }
    // crtstuff's call to the weak __cxa_finalize goes through .plt.got.
    const ElfSymbol* plt_got = FindByName(elf, "__cxa_finalize@plt");
    ASSERT_NE(plt_got, nullptr);
    EXPECT_GT(plt_got->size, 0u);
    EXPECT_EQ(elf.Find(plt_got->start + plt_got->size - 1), plt_got);
  }
  // The library calls its own exported (interposable) function via the PLT,
  // and its hidden ifunc through an IRELATIVE slot, which comes first in the
  // PLT but second in .rela.plt.
  ASSERT_LOADED(lib, kLib);
  const ElfSymbol* compute = FindByName(lib, "ns::Lib::compute(int)@plt");
  const ElfSymbol* ifunc = FindByName(lib, "lib_ifunc@plt");
  ASSERT_NE(compute, nullptr);
  ASSERT_NE(ifunc, nullptr);
  EXPECT_LT(ifunc->start, compute->start);
}

// Each stub is named after the relocation of the GOT slot it jumps through.
TEST(ElfSymbolsTest, PltSymbolsNameTheSlotTheyJumpThrough) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the PLT stub decoder in this test knows only x86_64";
#else
  std::vector<const char*> paths = ProgsWithPlt();
  paths.push_back(kLib);
  for (const char* path : paths) {
    SCOPED_TRACE(path);
    ASSERT_LOADED(elf, path);
    const std::vector<char> bytes = ReadWholeFile(path);
    const RawElf raw = ReadRawElf(path);
    const std::map<uint64_t, std::string> slot_names = RawGotSlotNames(bytes);
    int stubs = 0;
    for (const ElfSymbol& symbol : elf.symbols()) {
      if (!symbol.name().ends_with("@plt")) continue;
      ++stubs;
      const std::optional<uint64_t> slot = RawPltSlot(bytes, raw, symbol.start);
      ASSERT_TRUE(slot) << symbol.name() << " is not on a PLT stub";
      ASSERT_TRUE(slot_names.contains(*slot)) << symbol.name();
      const std::string& name = slot_names.at(*slot);
      if (name.starts_with("ifunc@")) {  // named after the ifunc symbol at the resolver
        EXPECT_EQ(symbol.name(), NameOrNull(elf.Find(std::stoull(name.substr(6)))) + "@plt");
      } else {
        EXPECT_EQ(symbol.name(), Demangle(name) + "@plt");
      }
    }
    EXPECT_GE(stubs, 1);
  }
#endif
}

TEST(ElfSymbolsTest, StrippedExecutableKeepsOnlyDynsymAndPlt) {
  ASSERT_LOADED(full, kProg);
  ASSERT_LOADED(stripped, kProgStripped);
  EXPECT_FALSE(stripped.has_symtab());
  EXPECT_EQ(FindByName(stripped, "main"), nullptr);
  EXPECT_EQ(FindByName(stripped, "ns::Foo::bar(int)"), nullptr);
  // PLT stubs need only .rela.plt and .dynsym, which strip keeps.
  const ElfSymbol* puts_plt = FindByName(stripped, "puts@plt");
  const ElfSymbol* full_puts_plt = FindByName(full, "puts@plt");
  ASSERT_NE(puts_plt, nullptr);
  ASSERT_NE(full_puts_plt, nullptr);
  EXPECT_EQ(puts_plt->start, full_puts_plt->start);
  EXPECT_EQ(stripped.build_id(), full.build_id());
}

// A stripped binary plus the unstripped file with the same build-id (what a
// separate debug file is) names everything the unstripped one does, and
// keeps the PLT stubs only the binary itself can describe.
TEST(ElfSymbolsTest, DebugFileSymbolsMergeIntoStrippedBinary) {
  auto stripped = ElfSymbols::Load(kProgStripped);
  auto full = ElfSymbols::Load(kProg);
  ASSERT_TRUE(stripped && full);
  ASSERT_EQ(stripped->build_id(), full->build_id());
  ASSERT_FALSE(stripped->has_symtab());
  stripped->MergeDebugSymbols(*full);
  EXPECT_TRUE(stripped->has_symtab());
  for (const ElfSymbol& s : full->symbols()) {
    const ElfSymbol* found = stripped->Find(s.start);
    ASSERT_NE(found, nullptr) << s.name();
    EXPECT_EQ(found->name(), s.name());
  }
  bool has_plt = false;
  for (const ElfSymbol& s : stripped->symbols()) has_plt |= s.name() == "puts@plt";
  EXPECT_TRUE(has_plt);
}

// Names are kept as the file spells them and demangled on request; they
// stay readable in copies and moves after every ElfSymbols they were read
// by is gone, a debug file's merged in too.
TEST(ElfSymbolsTest, NamesStayWithTheSymbolsThroughCopiesMovesAndMerges) {
  std::vector<std::pair<uint64_t, std::string>> want;
  {
    ASSERT_LOADED(full, kProg);
    const ElfSymbol* bar = FindByName(full, "ns::Foo::bar(int)");
    ASSERT_NE(bar, nullptr);
    EXPECT_EQ(bar->mangled, "_ZN2ns3Foo3barEi");
    for (const ElfSymbol& s : full.symbols()) want.emplace_back(s.start, s.name());
  }
  std::optional<ElfSymbols> kept;
  {
    auto stripped = ElfSymbols::Load(kProgStripped);
    auto full = ElfSymbols::Load(kProg);
    ASSERT_TRUE(stripped && full);
    stripped->MergeDebugSymbols(std::move(*full));
    full = Fail("gone");
    const ElfSymbols copy = *stripped;
    stripped = Fail("gone");
    kept.emplace(copy);
  }
  ASSERT_FALSE(want.empty());
  for (const auto& [start, name] : want) {
    const ElfSymbol* found = kept->Find(start);
    ASSERT_NE(found, nullptr) << name;
    EXPECT_EQ(found->name(), name);
  }
  EXPECT_NE(FindByName(*kept, "puts@plt"), nullptr);
}

// Load(binary, debug) reads the debug file's .symtab instead of the
// binary's own and gives what loading both and merging them gives.
TEST(ElfSymbolsTest, LoadWithDebugFileEqualsTheMerge) {
  for (const auto& [binary, debug] :
       {std::pair{kProgStripped, kProg}, std::pair{kLibStripped, kLib},
        std::pair{FIXTURE_SYMBOLIZER_STRIPPED_ALL_PATH, FIXTURE_SYMBOLIZER_DEBUG_PATH}}) {
    SCOPED_TRACE(binary);
    auto merged = ElfSymbols::Load(binary);
    auto debug_symbols = ElfSymbols::Load(debug);
    ASSERT_TRUE(merged && debug_symbols);
    merged->MergeDebugSymbols(*debug_symbols);
    auto loaded = ElfSymbols::Load(binary, debug);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_TRUE(loaded->has_symtab());
    EXPECT_EQ(loaded->build_id(), merged->build_id());
    ASSERT_EQ(loaded->symbols().size(), merged->symbols().size());
    for (size_t i = 0; i < merged->symbols().size(); ++i) {
      const ElfSymbol& want = merged->symbols()[i];
      const ElfSymbol& got = loaded->symbols()[i];
      EXPECT_EQ(got.start, want.start) << want.name();
      EXPECT_EQ(got.size, want.size) << want.name();
      EXPECT_EQ(got.name(), want.name());
    }
    ASSERT_EQ(loaded->segments().size(), merged->segments().size());
    EXPECT_EQ(loaded->FileOffsetToVaddr(loaded->segments()[0].offset),
              merged->FileOffsetToVaddr(merged->segments()[0].offset));
  }
}

TEST(ElfSymbolsTest, LoadWithDebugFileOfAnotherBuildFails) {
  auto loaded = ElfSymbols::Load(kProgStripped, kLib);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find(kLib), std::string::npos) << loaded.error().message;
  EXPECT_NE(loaded.error().message.find("does not match"), std::string::npos);
}

// A "debug file" without .symtab (here a stripped copy) leaves the binary's
// own symbols; an empty path is Load(binary).
TEST(ElfSymbolsTest, LoadWithDebugFileWithoutSymtabKeepsOwnSymbols) {
  auto own = ElfSymbols::Load(kProg);
  auto with_stripped = ElfSymbols::Load(kProg, kProgStripped);
  auto with_none = ElfSymbols::Load(kProg, std::string());
  ASSERT_TRUE(own && with_stripped && with_none);
  for (const ElfSymbols* loaded : {&*with_stripped, &*with_none}) {
    EXPECT_TRUE(loaded->has_symtab());
    ASSERT_EQ(loaded->symbols().size(), own->symbols().size());
    for (size_t i = 0; i < own->symbols().size(); ++i) {
      EXPECT_EQ(loaded->symbols()[i].name(), own->symbols()[i].name());
    }
  }
}

TEST(ElfSymbolsTest, SharedLibrarySymtabAndDynsym) {
  ASSERT_LOADED(full, kLib);
  ASSERT_LOADED(stripped, kLibStripped);
  EXPECT_TRUE(full.has_symtab());
  EXPECT_FALSE(stripped.has_symtab());
  EXPECT_NE(FindByName(full, "lib_static_helper(int)"), nullptr);
  EXPECT_EQ(FindByName(stripped, "lib_static_helper(int)"), nullptr);
  for (const char* name : {"ns::Lib::compute(int)", "lib_entry"}) {
    SCOPED_TRACE(name);
    const ElfSymbol* in_full = FindByName(full, name);
    const ElfSymbol* in_dynsym = FindByName(stripped, name);
    ASSERT_NE(in_full, nullptr);
    ASSERT_NE(in_dynsym, nullptr);
    EXPECT_EQ(in_dynsym->start, in_full->start);
    EXPECT_EQ(in_dynsym->size, in_full->size);
    ASSERT_GT(in_dynsym->size, 0u);
    EXPECT_EQ(stripped.Find(in_dynsym->start), in_dynsym);
    EXPECT_EQ(stripped.Find(in_dynsym->start + in_dynsym->size - 1), in_dynsym);
  }
}

TEST(ElfSymbolsTest, FileOffsetToVaddrOnPie) {
  ASSERT_LOADED(elf, kProg);
  const RawElf raw = ReadRawElf(kProg);
  ASSERT_EQ(raw.type, ET_DYN);
  ASSERT_FALSE(raw.loads.empty());
  bool saw_shifted_segment = false;
  uint64_t file_end = 0;
  for (const RawLoad& load : raw.loads) {
    if (load.filesz == 0) continue;
    saw_shifted_segment |= load.vaddr != load.offset;
    EXPECT_EQ(elf.FileOffsetToVaddr(load.offset), load.vaddr);
    EXPECT_EQ(elf.FileOffsetToVaddr(load.offset + load.filesz - 1), load.vaddr + load.filesz - 1);
    file_end = std::max(file_end, load.offset + load.filesz);
  }
  // The data segment of a PIE sits a page further in memory than in the
  // file, so the translation is not the identity everywhere.
  EXPECT_TRUE(saw_shifted_segment);
  EXPECT_EQ(elf.FileOffsetToVaddr(file_end), std::nullopt);
  EXPECT_EQ(elf.FileOffsetToVaddr(~uint64_t{0}), std::nullopt);

  // main: vaddr -> file offset by hand, then back and to the symbol.
  const ElfSymbol* main_symbol = FindByName(elf, "main");
  ASSERT_NE(main_symbol, nullptr);
  const std::optional<RawLoad> text = ExecutableLoadFor(raw, main_symbol->start);
  ASSERT_TRUE(text);
  const uint64_t offset = main_symbol->start - text->vaddr + text->offset + 5;
  const std::optional<uint64_t> vaddr = elf.FileOffsetToVaddr(offset);
  ASSERT_TRUE(vaddr);
  EXPECT_EQ(*vaddr, main_symbol->start + 5);
  EXPECT_EQ(elf.Find(*vaddr), main_symbol);
}

// The whole path a profiler takes: an address in a mapped library ->
// (ip - map_start + pgoff) -> FileOffsetToVaddr -> Find.
TEST(ElfSymbolsTest, ResolvesAddressInLoadedLibrary) {
  void* handle = dlopen(kLib, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  const auto ip = reinterpret_cast<uint64_t>(dlsym(handle, "lib_entry"));
  ASSERT_NE(ip, 0u);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::optional<uint64_t> file_offset;
  while (std::getline(maps, line)) {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t pgoff = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64, &start, &end, perms,
                    &pgoff) != 4)
      continue;
    if (ip >= start && ip < end) file_offset = ip - start + pgoff;
  }
  dlclose(handle);
  ASSERT_TRUE(file_offset) << "no mapping holds lib_entry";
  ASSERT_LOADED(elf, kLib);
  const std::optional<uint64_t> vaddr = elf.FileOffsetToVaddr(*file_offset + 3);
  ASSERT_TRUE(vaddr);
  EXPECT_EQ(NameOrNull(elf.Find(*vaddr)), "lib_entry");
}

TEST(ElfSymbolsTest, BuildIdIsHex) {
  for (const char* path : {kProg, kProgDebug, kProgStripped, kLib, kLibStripped}) {
    SCOPED_TRACE(path);
    ASSERT_LOADED(elf, path);
    EXPECT_EQ(elf.build_id().size(), 40u);
    EXPECT_TRUE(IsLowerHex(elf.build_id())) << elf.build_id();
    const Result<std::string> notes_only = ReadElfBuildId(path);
    ASSERT_TRUE(notes_only) << notes_only.error().message;
    EXPECT_EQ(*notes_only, elf.build_id());
  }
}

TEST(ElfSymbolsTest, NoBuildIdNoteGivesEmptyString) {
  ASSERT_LOADED(elf, kProgNoBuildId);
  EXPECT_EQ(elf.build_id(), "");
  EXPECT_NE(FindByName(elf, "main"), nullptr);
  const Result<std::string> notes_only = ReadElfBuildId(kProgNoBuildId);
  ASSERT_TRUE(notes_only) << notes_only.error().message;
  EXPECT_EQ(*notes_only, "");
}

// With the section headers gone the build-id is found through PT_NOTE.
TEST(ElfSymbolsTest, BuildIdFromProgramHeadersWithoutSections) {
  ASSERT_LOADED(expected, kProgStripped);
  std::vector<char> bytes = ReadWholeFile(kProgStripped);
  Elf64_Ehdr ehdr;
  ASSERT_GE(bytes.size(), sizeof(ehdr));
  std::memcpy(&ehdr, bytes.data(), sizeof(ehdr));
  ehdr.e_shoff = 0;
  ehdr.e_shnum = 0;
  ehdr.e_shstrndx = SHN_UNDEF;
  std::memcpy(bytes.data(), &ehdr, sizeof(ehdr));
  const std::string path = testing::TempDir() + "elf_symbols_test_no_sections";
  WriteWholeFile(path, bytes);
  const Result<std::string> build_id = ReadElfBuildId(path);
  auto loaded = ElfSymbols::Load(path);
  std::remove(path.c_str());
  ASSERT_TRUE(build_id) << build_id.error().message;
  EXPECT_EQ(*build_id, expected.build_id());
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->build_id(), expected.build_id());
  EXPECT_TRUE(loaded->symbols().empty());
  EXPECT_TRUE(loaded->FileOffsetToVaddr(0x1000));
}

// A Go binary's build ID is a note of owner "Go" (padded to 4 bytes),
// type 4: kProg's GNU build-id note made into one.
TEST(ElfSymbolsTest, GoBuildIdNote) {
  ASSERT_LOADED(expected, kProg);
  std::vector<char> bytes = ReadWholeFile(kProg);
  const std::string gnu_note("\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16);
  const std::string go_note("\x04\0\0\0\x14\0\0\0\x04\0\0\0Go\0\0", 16);
  auto at = std::search(bytes.begin(), bytes.end(), gnu_note.begin(), gnu_note.end());
  ASSERT_NE(at, bytes.end()) << "no GNU build-id note in " << kProg;
  std::copy(go_note.begin(), go_note.end(), at);
  const std::string path = testing::TempDir() + "elf_symbols_test_go_note";
  WriteWholeFile(path, bytes);
  auto file = ElfFile::Open(path);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(ReadElfBuildId(*file), "");
  EXPECT_EQ(ReadGoBuildId(*file), expected.build_id());
  auto own = ElfFile::Open(kProg);
  ASSERT_TRUE(own);
  EXPECT_EQ(ReadGoBuildId(*own), "");
  std::remove(path.c_str());
}

TEST(ElfSymbolsTest, MissingFileErrorNamesPath) {
  const std::string path = "/nonexistent/dir/no-such-binary";
  auto loaded = ElfSymbols::Load(path);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find(path), std::string::npos) << loaded.error().message;
  const Result<std::string> build_id = ReadElfBuildId(path);
  ASSERT_FALSE(build_id);
  EXPECT_NE(build_id.error().message.find(path), std::string::npos) << build_id.error().message;
}

TEST(ElfSymbolsTest, NonElfFileIsAnError) {
  const std::string path = testing::TempDir() + "elf_symbols_test_not_elf";
  WriteWholeFile(path, std::vector<char>{'h', 'e', 'l', 'l', 'o', '\n'});
  auto loaded = ElfSymbols::Load(path);
  std::remove(path.c_str());
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find(path), std::string::npos) << loaded.error().message;
  EXPECT_NE(loaded.error().message.find("not an ELF file"), std::string::npos);
}

TEST(ElfSymbolsTest, Elf32Executable) {
#ifndef FIXTURE_ELF32_PATH
  GTEST_SKIP() << "the compiler cannot build -m32 executables here, so there is no ELF32 fixture";
#else
  const char* const path = FIXTURE_ELF32_PATH;
  ASSERT_LOADED(elf, path);
  EXPECT_TRUE(elf.has_symtab());
  EXPECT_EQ(elf.build_id().size(), 40u);
  const ElfSymbol* work = FindByName(elf, "work32");
  const ElfSymbol* other = FindByName(elf, "ns::other32(int)");
  ASSERT_NE(work, nullptr);
  ASSERT_NE(other, nullptr);
  ASSERT_GT(other->size, 0u);
  EXPECT_EQ(elf.Find(other->start), other);
  EXPECT_EQ(elf.Find(other->start + other->size - 1), other);
  // A non-PIE i386 executable: text at 0x8049000, file offset 0x1000-ish.
  const RawElf raw = ReadRawElf(path);
  const std::optional<RawLoad> text = ExecutableLoadFor(raw, work->start);
  ASSERT_TRUE(text);
  EXPECT_NE(text->vaddr, text->offset);
  const std::optional<uint64_t> vaddr =
      elf.FileOffsetToVaddr(work->start - text->vaddr + text->offset);
  EXPECT_EQ(vaddr, work->start);
#endif
}

}  // namespace
}  // namespace sample
