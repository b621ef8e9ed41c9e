// Tests for GoPclntab (a Go binary's own function table) against the same
// binary's .symtab and DWARF: an unstripped Go build has both, so every
// function the table names must be the symbol at its entry, and every line
// it gives the line DWARF gives. Then damaged copies of it, which must
// parse or fail without reading outside their bytes.
#include "libsample/symbols/go_pclntab.h"

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"
#include "tests/unit/go_pclntab_builder.h"

namespace sample {
namespace {

using testing::BuildGoPclntab;
using testing::GoInlinedCall;
using testing::GoTableFunction;
using testing::GoTableLayout;

// Every layout, as the runtime of each release describes it: names,
// ranges, files and lines.
TEST(GoPclntabTest, EveryLayoutGivesNamesRangesFilesAndLines) {
  const std::vector<GoTableFunction> functions = {
      {"runtime.main", 0x401000, 0x401080, "/go/src/runtime/proc.go", 250},
      {"main.(*Worker).spin", 0x401080, 0x401100, "/src/app/main.go", 37},
      {"main.alpha", 0x401100, 0x401190, "/src/app/main.go", 25},
  };
  for (const GoTableLayout layout : {GoTableLayout::kGo12, GoTableLayout::kGo116,
                                     GoTableLayout::kGo118, GoTableLayout::kGo120}) {
    SCOPED_TRACE(static_cast<int>(layout));
    for (const bool text_in_header : {true, false}) {
      const std::vector<std::byte> bytes =
          BuildGoPclntab(layout, functions, 0x401000, text_in_header);
      auto table = GoPclntab::Parse(bytes, 0x401000);
      ASSERT_TRUE(table) << table.error().message;
      ASSERT_EQ(table->functions().size(), functions.size());
      for (size_t i = 0; i < functions.size(); ++i) {
        const GoPclntab::Function& f = table->functions()[i];
        EXPECT_EQ(f.name, functions[i].name);
        EXPECT_EQ(f.start, functions[i].start);
        EXPECT_EQ(f.end, functions[i].end);
        for (uint64_t pc : {f.start, f.end - 1}) {
          const auto line = table->LineAt(f, pc);
          ASSERT_TRUE(line) << f.name;
          EXPECT_EQ(line->file, functions[i].file);
          EXPECT_EQ(line->line, functions[i].line);
        }
        EXPECT_FALSE(table->LineAt(f, f.end));
      }
    }
  }
}

// A PIE's table holds 0 where .text's address goes (the loader relocates
// it): entries count from the section's .text then.
TEST(GoPclntabTest, APieTableCountsFromText) {
  const std::vector<GoTableFunction> functions = {{"main.main", 0x1000, 0x1040, "m.go", 3}};
  auto table = GoPclntab::Parse(
      BuildGoPclntab(GoTableLayout::kGo120, functions, 0x1000, /*text_in_header=*/false), 0x1000);
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->functions().size(), 1u);
  EXPECT_EQ(table->functions()[0].start, 0x1000u);
}

// The inline trees of Go 1.18 and later, found through the moduledata as
// each release lays it out: an inlined call's pcs are a frame of the
// callee's, at its line, inside the caller at the call's site.
TEST(GoPclntabTest, EveryLayoutsInlineTreesGiveTheInlinedCalls) {
  const std::vector<GoTableFunction> functions = {
      {"main.main", 0x401000, 0x401080, "/src/app/main.go", 12,
       GoInlinedCall{"main.mix", 40, 0x30}},
      {"main.plain", 0x401080, 0x401100, "/src/app/main.go", 25, std::nullopt},
  };
  for (const GoTableLayout layout : {GoTableLayout::kGo118, GoTableLayout::kGo120}) {
    SCOPED_TRACE(static_cast<int>(layout));
    const uint64_t table_address = 0x480000, gofunc = 0x470000;
    const testing::GoModule module =
        testing::BuildGoModule(layout, functions, 0x401000, table_address, gofunc);
    auto table = GoPclntab::Parse(module.pclntab, 0x401000);
    ASSERT_TRUE(table) << table.error().message;
    EXPECT_FALSE(table->FindGoFunc(module.data, table_address + 8));
    ASSERT_EQ(table->FindGoFunc(module.data, table_address), gofunc);
    table->AttachFuncData(module.funcdata);
    ASSERT_TRUE(table->has_inline_trees());
    ASSERT_EQ(table->functions().size(), 2u);
    const GoPclntab::FunctionTables main = table->TablesOf(table->functions()[0]);
    const auto frames = table->FramesAt(main, 0x401010);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].function, "main.mix");
    ASSERT_TRUE(frames[0].line);
    EXPECT_EQ(frames[0].line->line, 40u);
    EXPECT_EQ(frames[0].line->file, "/src/app/main.go");
    EXPECT_EQ(frames[1].function, "main.main");
    ASSERT_TRUE(frames[1].line);
    EXPECT_EQ(frames[1].line->line, 12u);
    const auto own = table->FramesAt(main, 0x401030);
    ASSERT_EQ(own.size(), 1u);
    EXPECT_EQ(own[0].function, "main.main");
    EXPECT_NE(table->KeyAt(main, 0x40102f), table->KeyAt(main, 0x401030));
    EXPECT_EQ(table->KeyAt(main, 0x401000), table->KeyAt(main, 0x40102f));
    const auto plain = table->FramesAt(table->TablesOf(table->functions()[1]), 0x401080);
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_EQ(plain[0].function, "main.plain");
    // Cut funcdata: the function alone, never a read outside.
    for (size_t cut = 0; cut < module.funcdata.size(); ++cut) {
      GoPclntab cut_table = *GoPclntab::Parse(module.pclntab, 0x401000);
      cut_table.AttachFuncData(std::span(module.funcdata).first(cut));
      const auto at = cut_table.FramesAt(cut_table.TablesOf(cut_table.functions()[0]), 0x401010);
      ASSERT_FALSE(at.empty());
      EXPECT_EQ(at.back().function, "main.main");
    }
  }
}

#if defined(WORKLOAD_GO_NAMES_PATH)
const char* const kGo = WORKLOAD_GO_NAMES_PATH;

// The section's bytes and .text's address, read with libelf.
struct Section {
  std::vector<std::byte> bytes;
  uint64_t text = 0;
};

Section ReadPclntab(const std::string& path) {
  Section out;
  auto file = ElfFile::Open(path);
  EXPECT_TRUE(file) << file.error().message;
  if (!file) return out;
  Elf_Scn* scn = FindElfSection(file->get(), ".gopclntab");
  Elf_Data* data = scn != nullptr ? elf_rawdata(scn, nullptr) : nullptr;
  EXPECT_NE(data, nullptr) << path << " has no .gopclntab";
  if (data == nullptr) return out;
  const auto* begin = static_cast<const std::byte*>(data->d_buf);
  out.bytes.assign(begin, begin + data->d_size);
  GElf_Shdr text;
  if (Elf_Scn* t = FindElfSection(file->get(), ".text"); t != nullptr && gelf_getshdr(t, &text)) {
    out.text = text.sh_addr;
  }
  return out;
}

TEST(GoPclntabTest, EveryFunctionIsTheSymbolAtItsEntry) {
  const Section section = ReadPclntab(kGo);
  auto table = GoPclntab::Parse(section.bytes, section.text);
  ASSERT_TRUE(table) << table.error().message;
  auto symbols = ElfSymbols::Load(kGo);
  ASSERT_TRUE(symbols) << symbols.error().message;
  ASSERT_TRUE(symbols->has_symtab());
  ASSERT_GT(table->functions().size(), 500u);
  size_t same = 0;
  bool alpha = false, spin = false;
  for (const GoPclntab::Function& f : table->functions()) {
    const ElfSymbol* symbol = symbols->Find(f.start);
    // The linker's .symtab adds ".abi0" to assembly functions and spells
    // out the array lengths of generated type functions the table elides
    // ("type..eq.[...]T"); the rest is the same name.
    const std::string_view name = symbol != nullptr ? symbol->mangled : "";
    const bool alike = name == f.name || name == std::string(f.name) + ".abi0" ||
                       (f.name.starts_with("type..") && name.starts_with("type.."));
    if (symbol != nullptr && symbol->start == f.start && alike) {
      ++same;
    } else {
      ADD_FAILURE() << f.name << " at " << std::hex << f.start << ", .symtab: " << name;
    }
    if (f.name == "main.alpha") {
      alpha = true;
      ASSERT_NE(symbol, nullptr);
      // The range is the symbol's and the padding to the next function.
      EXPECT_GE(f.end - f.start, symbol->size);
      EXPECT_LT(f.end - f.start, symbol->size + 32);
    }
    spin = spin || f.name == "main.(*Worker).spin";
  }
  EXPECT_TRUE(alpha);
  EXPECT_TRUE(spin);
  EXPECT_EQ(same, table->functions().size());
}

TEST(GoPclntabTest, LinesAreDwarfsLines) {
  const Section section = ReadPclntab(kGo);
  auto table = GoPclntab::Parse(section.bytes, section.text);
  ASSERT_TRUE(table) << table.error().message;
  auto symbolizer = BinarySymbolizer::Open(kGo);
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  ASSERT_FALSE(symbolizer->dwarf_path().empty()) << "the unstripped Go build has DWARF";
  size_t compared = 0, same = 0;
  for (const GoPclntab::Function& f : table->functions()) {
    if (!f.name.starts_with("main.")) continue;
    for (uint64_t pc = f.start; pc < f.end; ++pc) {
      const auto line = table->LineAt(f, pc);
      const std::vector<SymbolFrame> frames = symbolizer->SymbolizeVaddr(pc);
      if (!line || frames.empty() || frames[0].line == 0) continue;
      ++compared;
      same += frames[0].line == line->line &&
              Basename(frames[0].file) == Basename(std::string(line->file));
    }
  }
  ASSERT_GT(compared, 100u);
  EXPECT_EQ(same, compared);
}

// The calls Go inlined, from the table's inline trees, against DWARF's
// inlined subroutines: at every pc of every function, the same chain of
// names, and nearly always the same lines. The runtime inlines much
// (go_names alone: over a thousand pcs in inlined calls). Lines differ at
// about 0.04% of pcs, where Go's DWARF line table has no row of the
// instruction's own (the NOPs that mark an inlined call's site: at
// runtime.closechan's 0x40489d DWARF says runtime2.go:266, the table and
// `go tool addr2line` chan.go:380).
bool IsWrapperOf(std::string_view wrapper, std::string_view method) {
  const size_t open = wrapper.find("(*");
  const size_t close = wrapper.find(')', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return false;
  const std::string value = std::string(wrapper.substr(0, open)) +
                            std::string(wrapper.substr(open + 2, close - open - 2)) +
                            std::string(wrapper.substr(close + 1));
  return value == method;
}

TEST(GoPclntabTest, InlinedCallsAreDwarfsInlinedCalls) {
  auto file = ElfFile::Open(kGo);
  ASSERT_TRUE(file) << file.error().message;
  const std::optional<GoPclntab> table = ReadGoPclntab(*file);
  ASSERT_TRUE(table);
  ASSERT_TRUE(table->has_inline_trees()) << "moduledata.gofunc was not found";
  auto symbolizer = BinarySymbolizer::Open(kGo);
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  size_t inlined = 0, compared = 0, named = 0, lined = 0;
  for (const GoPclntab::Function& f : table->functions()) {
    const GoPclntab::FunctionTables tables = table->TablesOf(f);
    for (uint64_t pc = f.start; pc < f.end; ++pc) {
      const std::vector<GoPclntab::Frame> go = table->FramesAt(tables, pc);
      const std::vector<SymbolFrame> dwarf = symbolizer->SymbolizeVaddr(pc);
      ASSERT_FALSE(go.empty());
      EXPECT_EQ(go.back().function, f.name);
      if (dwarf.empty() || dwarf[0].name_source != NameSource::kDwarf) continue;
      ++compared;
      inlined += go.size() > 1;
      // The pointer-method wrappers the compiler generates ("(*T).M"
      // calling "T.M") have their inlined value method in the table only.
      const size_t skip =
          go.size() == dwarf.size() + 1 && IsWrapperOf(go[1].function, go[0].function);
      bool same_names = go.size() == dwarf.size() + skip, same_lines = same_names;
      for (size_t i = skip; same_names && i < go.size(); ++i) {
        // The table elides generated type functions' array lengths
        // ("type..eq.[...]T", where DWARF says "[5]T").
        const SymbolFrame& other = dwarf[i - skip];
        same_names = go[i].function == other.function ||
                     (go[i].function.starts_with("type..") && other.function.starts_with("type.."));
        same_lines = same_lines && go[i].line && go[i].line->line == other.line &&
                     Basename(std::string(go[i].line->file)) == Basename(other.file);
      }
      named += same_names;
      lined += same_names && same_lines;
      if (!same_names && compared - named <= 5) {
        std::string text;
        for (const auto& frame : go) text += fmt::format(" {}", frame.function);
        text += " | DWARF:";
        for (const auto& frame : dwarf) text += fmt::format(" {}", frame.function);
        ADD_FAILURE() << std::hex << pc << std::dec << text;
      }
    }
  }
  EXPECT_GT(inlined, 1000u);
  EXPECT_EQ(named, compared);
  EXPECT_GT(lined, compared - compared / 1000) << lined << " of " << compared;
}

// A function's range holds its pcs and no other (the stripped workload's
// names in a report: tests/e2e/go_binaries_test.cc).
TEST(GoPclntabTest, FunctionAtTheEdgesOfARange) {
  const Section section = ReadPclntab(kGo);
  auto table = GoPclntab::Parse(section.bytes, section.text);
  ASSERT_TRUE(table) << table.error().message;
  const GoPclntab::Function* alpha = nullptr;
  for (const GoPclntab::Function& f : table->functions()) {
    if (f.name == "main.alpha") alpha = &f;
  }
  ASSERT_NE(alpha, nullptr);
  EXPECT_EQ(table->FunctionAt(alpha->start), alpha);
  EXPECT_EQ(table->FunctionAt(alpha->end - 1), alpha);
  EXPECT_NE(table->FunctionAt(alpha->end), alpha);
  const auto line = table->LineAt(*alpha, alpha->start);
  ASSERT_TRUE(line);
  EXPECT_EQ(Basename(std::string(line->file)), "go_names.go");
}

TEST(GoPclntabTest, DamagedTablesNeverReadOutside) {
  const Section section = ReadPclntab(kGo);
  ASSERT_FALSE(section.bytes.empty());
  std::mt19937 random(59);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::byte> bytes = section.bytes;
    if (round % 3 == 0) {
      // Cut anywhere, the header included.
      bytes.resize(random() % std::min<size_t>(bytes.size(), 4096 + round * 64));
    } else {
      // Flip bytes in the header and the function table.
      for (int flip = 0; flip < 8; ++flip) {
        const size_t at = random() % std::min<size_t>(bytes.size(), 1 << 16);
        bytes[at] = static_cast<std::byte>(random());
      }
    }
    auto table = GoPclntab::Parse(bytes, section.text);
    if (!table) {
      EXPECT_TRUE(table.error().message.starts_with(".gopclntab: ")) << table.error().message;
      continue;
    }
    for (size_t i = 0; i < table->functions().size(); i += 7) {
      const GoPclntab::Function& f = table->functions()[i];
      EXPECT_LT(f.start, f.end);
      (void)table->LineAt(f, f.start + (f.end - f.start) / 2);
    }
  }
}

TEST(GoPclntabTest, NoTableIsAnError) {
  EXPECT_FALSE(GoPclntab::Parse({}, 0));
  const std::vector<std::byte> zeros(64);
  auto table = GoPclntab::Parse(zeros, 0);
  ASSERT_FALSE(table);
  EXPECT_NE(table.error().message.find("magic"), std::string::npos) << table.error().message;
}
#else
TEST(GoPclntabTest, EveryFunctionIsTheSymbolAtItsEntry) {
  GTEST_SKIP() << "go was not found when the build was configured (scripts/setup.sh installs "
                  "golang-go with the test packages)";
}
#endif

}  // namespace
}  // namespace sample
