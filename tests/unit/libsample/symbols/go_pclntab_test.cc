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

#include <gtest/gtest.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"
#include "tests/unit/go_pclntab_builder.h"

namespace sample {
namespace {

using testing::BuildGoPclntab;
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
