// Tests for BinarySymbolizer on the fixtures of tests/fixtures/: DWARF names
// and lines, inline chains, ELF fallbacks (.symtab, PLT), separate debug
// files, C++ and Rust names. Expected lines come from markers in the fixture
// sources, so the fixtures can change without editing numbers here.
#include "libsample/symbols/binary_symbolizer.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/symbolizer_test_util.h"

namespace sample {
namespace {

using testing::Describe;
using ::testing::ElementsAre;
using testing::Expect;
using ::testing::HasSubstr;
using testing::LineOf;

const char* const kSource = FIXTURE_SYMBOLIZER_SOURCE;
const char* const kSym = FIXTURE_SYMBOLIZER_PATH;
const char* const kSymNoDebug = FIXTURE_SYMBOLIZER_NODEBUG_PATH;
const char* const kSymDebug = FIXTURE_SYMBOLIZER_DEBUG_PATH;
const char* const kSymStripped = FIXTURE_SYMBOLIZER_STRIPPED_PATH;
const char* const kSymStrippedAll = FIXTURE_SYMBOLIZER_STRIPPED_ALL_PATH;
const char* const kProgSource = FIXTURE_PROG_SOURCE;
const char* const kProgDebug = FIXTURE_PROG_DEBUG_PATH;
const char* const kCxxSource = FIXTURE_INLINE_CXX_SOURCE;
const char* const kCxxInline = FIXTURE_INLINE_CXX_PATH;
const char* const kCxxOutOfLine = FIXTURE_INLINE_CXX_OUTOFLINE_PATH;

#define ASSERT_OPENED(var, ...)                              \
  auto var##_result = BinarySymbolizer::Open(__VA_ARGS__);   \
  ASSERT_TRUE(var##_result) << var##_result.error().message; \
  BinarySymbolizer& var = *var##_result

// The ELF symbol named `name` (from the symbolizer's own ELF symbols).
const ElfSymbol* SymbolNamed(const BinarySymbolizer& symbolizer, std::string_view name) {
  for (const ElfSymbol& symbol : symbolizer.elf_symbols().symbols()) {
    if (symbol.name() == name) return &symbol;
  }
  return nullptr;
}

// Describe() of the frames at every address of function `name`.
std::set<std::vector<std::string>> ChainsIn(BinarySymbolizer& symbolizer, std::string_view name) {
  std::set<std::vector<std::string>> chains;
  const ElfSymbol* symbol = SymbolNamed(symbolizer, name);
  EXPECT_NE(symbol, nullptr) << name;
  if (symbol == nullptr) return chains;
  EXPECT_GT(symbol->size, 0u) << name;
  for (uint64_t vaddr = symbol->start; vaddr < symbol->start + symbol->size; ++vaddr) {
    chains.insert(Describe(symbolizer.SymbolizeVaddr(vaddr)));
  }
  return chains;
}

// The inline chain fixture_symbolizer.c's uses_inline must show at the
// instructions of inner_inline's body.
std::vector<std::string> ExpectedInlineChain() {
  return {Expect("inner_inline", true, kSource, LineOf(kSource, "LINE:inner_body")),
          Expect("outer_inline", true, kSource, LineOf(kSource, "LINE:outer_calls_inner")),
          Expect("uses_inline", false, kSource, LineOf(kSource, "LINE:uses_calls_outer"))};
}

void ExpectInlineChains(BinarySymbolizer& symbolizer) {
  const auto chains = ChainsIn(symbolizer, "uses_inline");
  EXPECT_TRUE(chains.count(ExpectedInlineChain())) << ::testing::PrintToString(chains);
  // One level only: outer_inline's own code (the "* 3").
  EXPECT_TRUE(chains.count(
      {Expect("outer_inline", true, kSource, LineOf(kSource, "LINE:outer_calls_inner")),
       Expect("uses_inline", false, kSource, LineOf(kSource, "LINE:uses_calls_outer"))}))
      << ::testing::PrintToString(chains);
  // Every address ends in the real function, not inlined.
  for (const auto& chain : chains) {
    ASSERT_FALSE(chain.empty());
    EXPECT_THAT(chain.back(), HasSubstr("uses_inline ")) << ::testing::PrintToString(chain);
    EXPECT_THAT(chain.back(), ::testing::Not(HasSubstr("(inlined)")));
  }
}

TEST(BinarySymbolizerTest, InlineFramesInnermostFirstWithCallSiteLines) {
  ASSERT_OPENED(symbolizer, kSym);
  EXPECT_EQ(symbolizer.dwarf_path(), kSym);
  ExpectInlineChains(symbolizer);
}

TEST(BinarySymbolizerTest, InlineFramesAreMarkedAndCarryTheirOwnLines) {
  ASSERT_OPENED(symbolizer, kSym);
  const ElfSymbol* uses = SymbolNamed(symbolizer, "uses_inline");
  ASSERT_NE(uses, nullptr);
  // The first address whose innermost frame is inner_inline.
  std::vector<SymbolFrame> frames;
  for (uint64_t vaddr = uses->start; vaddr < uses->start + uses->size && frames.empty(); ++vaddr) {
    auto found = symbolizer.SymbolizeVaddr(vaddr);
    if (!found.empty() && found[0].function == "inner_inline") frames = found;
  }
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_TRUE(frames[0].inlined);
  EXPECT_TRUE(frames[1].inlined);
  EXPECT_FALSE(frames[2].inlined);
  EXPECT_EQ(frames[0].line, LineOf(kSource, "LINE:inner_body"));
  EXPECT_EQ(frames[1].line, LineOf(kSource, "LINE:outer_calls_inner"));
  EXPECT_EQ(frames[2].line, LineOf(kSource, "LINE:uses_calls_outer"));
  for (const SymbolFrame& frame : frames) {
    EXPECT_EQ(frame.name_source, NameSource::kDwarf);
    // The path as DWARF has it: absolute, not shortened.
    EXPECT_TRUE(frame.file.starts_with("/")) << frame.file;
    EXPECT_EQ(frame.srcline(), frame.file + ":" + std::to_string(frame.line));
  }
}

TEST(BinarySymbolizerTest, FileOffsetsGoThroughTheLoadSegments) {
  ASSERT_OPENED(symbolizer, kSym);
  const ElfSymbol* worker = SymbolNamed(symbolizer, "static_worker");
  ASSERT_NE(worker, nullptr);
  const auto offset = symbolizer.elf_symbols().VaddrToFileOffset(worker->start);
  ASSERT_TRUE(offset);
  EXPECT_EQ(Describe(symbolizer.SymbolizeFileOffset(*offset)),
            Describe(symbolizer.SymbolizeVaddr(worker->start)));
  EXPECT_TRUE(symbolizer.SymbolizeFileOffset(uint64_t{1} << 40).empty());
}

TEST(BinarySymbolizerTest, PlainFunctionHasOneFrameWithItsLine) {
  ASSERT_OPENED(symbolizer, kSym);
  const auto chains = ChainsIn(symbolizer, "static_worker");
  EXPECT_TRUE(chains.count(
      {Expect("static_worker", false, kSource, LineOf(kSource, "LINE:static_worker_body"))}))
      << ::testing::PrintToString(chains);
  for (const auto& chain : chains) EXPECT_EQ(chain.size(), 1u) << ::testing::PrintToString(chain);
}

TEST(BinarySymbolizerTest, UnitsAreIndexedOnFirstLookup) {
  ASSERT_OPENED(symbolizer, kSym);
  EXPECT_GE(symbolizer.unit_count(), 1u);
  EXPECT_EQ(symbolizer.indexed_unit_count(), 0u);
  const ElfSymbol* worker = SymbolNamed(symbolizer, "static_worker");
  ASSERT_NE(worker, nullptr);
  symbolizer.SymbolizeVaddr(worker->start);
  symbolizer.SymbolizeVaddr(worker->start + 1);
  EXPECT_EQ(symbolizer.indexed_unit_count(), 1u);
}

TEST(BinarySymbolizerTest, RustMangledNameIsReadable) {
  for (const char* path : {kSym, kSymNoDebug}) {
    SCOPED_TRACE(path);
    ASSERT_OPENED(symbolizer, path);
    const ElfSymbol* rust = SymbolNamed(symbolizer, "mycrate::module::function");
    ASSERT_NE(rust, nullptr);
    const auto frames = symbolizer.SymbolizeVaddr(rust->start);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function, "mycrate::module::function");
    // With DWARF, the name is its demangled DW_AT_linkage_name.
    EXPECT_EQ(frames[0].name_source, path == kSym ? NameSource::kDwarf : NameSource::kSymtab);
  }
}

TEST(BinarySymbolizerTest, PltStubsAreNamed) {
  for (const char* path : {kSym, kSymNoDebug}) {
    SCOPED_TRACE(path);
    ASSERT_OPENED(symbolizer, path);
    const ElfSymbol* stub = SymbolNamed(symbolizer, "puts@plt");
    ASSERT_NE(stub, nullptr);
    const auto frames = symbolizer.SymbolizeVaddr(stub->start + 1);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function, "puts@plt");
    EXPECT_EQ(frames[0].name_source, NameSource::kPlt);
    EXPECT_EQ(frames[0].srcline(), "");
  }
}

TEST(BinarySymbolizerTest, WithoutDwarfNamesComeFromSymtabWithoutLines) {
  ASSERT_OPENED(symbolizer, kSymNoDebug);
  EXPECT_EQ(symbolizer.dwarf_path(), "");
  EXPECT_THAT(symbolizer.dwarf_error(), HasSubstr("no DWARF"));
  EXPECT_EQ(symbolizer.unit_count(), 0u);
  for (const char* name : {"static_worker", "uses_inline", "main"}) {
    SCOPED_TRACE(name);
    const ElfSymbol* symbol = SymbolNamed(symbolizer, name);
    ASSERT_NE(symbol, nullptr);
    const auto frames = symbolizer.SymbolizeVaddr(symbol->start);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function, name);
    EXPECT_EQ(frames[0].name_source, NameSource::kSymtab);
    EXPECT_FALSE(frames[0].inlined);
    EXPECT_EQ(frames[0].line, 0u);
    EXPECT_EQ(frames[0].srcline(), "");
  }
}

TEST(BinarySymbolizerTest, SeparateDebugFileGivesDwarfToAStrippedBinary) {
  for (const char* binary : {kSymStripped, kSymStrippedAll}) {
    SCOPED_TRACE(binary);
    ASSERT_OPENED(symbolizer, binary, kSymDebug);
    EXPECT_EQ(symbolizer.dwarf_path(), kSymDebug);
    ExpectInlineChains(symbolizer);
    // A static function, which only the debug file's .symtab and DWARF know
    // in the --strip-all binary.
    const auto chains = ChainsIn(symbolizer, "static_worker");
    EXPECT_TRUE(chains.count(
        {Expect("static_worker", false, kSource, LineOf(kSource, "LINE:static_worker_body"))}));
    // The binary's own PLT stubs survive the merge with the debug .symtab.
    const ElfSymbol* stub = SymbolNamed(symbolizer, "puts@plt");
    ASSERT_NE(stub, nullptr);
    EXPECT_EQ(symbolizer.SymbolizeVaddr(stub->start)[0].function, "puts@plt");
  }
}

// Opened without DWARF, a symbolizer names from the ELF symbols alone;
// ReadDwarf() then gives what opening with DWARF gives.
TEST(BinarySymbolizerTest, DwarfReadAfterASkippingOpen) {
  ASSERT_OPENED(symbolizer, kSymStripped, kSymDebug, BinarySymbolizer::DwarfUse::kSkip);
  EXPECT_EQ(symbolizer.dwarf_path(), "");
  EXPECT_EQ(symbolizer.dwarf_error(), "DWARF not read");
  EXPECT_FALSE(ChainsIn(symbolizer, "uses_inline").count(ExpectedInlineChain()));
  symbolizer.ReadDwarf();
  EXPECT_EQ(symbolizer.dwarf_path(), kSymDebug);
  EXPECT_EQ(symbolizer.dwarf_error(), "");
  ExpectInlineChains(symbolizer);
  ASSERT_OPENED(reading, kSymStripped, kSymDebug);
  EXPECT_EQ(ChainsIn(symbolizer, "static_worker"), ChainsIn(reading, "static_worker"));
  symbolizer.ReadDwarf();  // again: nothing changes
  EXPECT_EQ(symbolizer.unit_count(), reading.unit_count());
}

TEST(BinarySymbolizerTest, StrippedBinaryAloneHasNoLines) {
  ASSERT_OPENED(symbolizer, kSymStripped);
  EXPECT_EQ(symbolizer.dwarf_path(), "");
  const ElfSymbol* worker = SymbolNamed(symbolizer, "static_worker");
  ASSERT_NE(worker, nullptr);
  const auto frames = symbolizer.SymbolizeVaddr(worker->start);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "static_worker");
  EXPECT_EQ(frames[0].srcline(), "");
}

TEST(BinarySymbolizerTest, DebugFileOfAnotherBuildIsRefused) {
  auto symbolizer = BinarySymbolizer::Open(kSymStripped, kProgDebug);
  ASSERT_FALSE(symbolizer);
  EXPECT_THAT(symbolizer.error().message, HasSubstr("build-id"));
  EXPECT_THAT(symbolizer.error().message, HasSubstr(kProgDebug));
}

TEST(BinarySymbolizerTest, MissingFilesAreErrorsNamingThePath) {
  auto symbolizer = BinarySymbolizer::Open("/nonexistent/binary");
  ASSERT_FALSE(symbolizer);
  EXPECT_THAT(symbolizer.error().message, HasSubstr("/nonexistent/binary"));
  auto debug = BinarySymbolizer::Open(kSym, "/nonexistent/binary.debug");
  ASSERT_FALSE(debug);
  EXPECT_THAT(debug.error().message, HasSubstr("/nonexistent/binary.debug"));
}

TEST(BinarySymbolizerTest, CxxNamesFromDwarfAreDemangledLinkageNames) {
  ASSERT_OPENED(symbolizer, kProgDebug);
  const struct {
    const char* name;
    const char* marker;
  } cases[] = {
      {"int twice<int>(int)", "return x + x;"},
      {"ns::Foo::bar(int)", "return x * 7 + 1;"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const ElfSymbol* symbol = SymbolNamed(symbolizer, c.name);
    ASSERT_NE(symbol, nullptr);
    const auto frames = symbolizer.SymbolizeVaddr(symbol->start);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function, c.name);
    EXPECT_EQ(frames[0].name_source, NameSource::kDwarf);
    EXPECT_EQ(Describe(frames[0]),
              Expect(c.name, false, kProgSource, LineOf(kProgSource, c.marker)));
  }
}

// Inlined C++ calls are named as fully as out-of-line functions: as the
// demangler names the symbol the function would have out of line (what perf
// and our report show for a function that was not inlined), parameter list
// included. The reference is the demangled .symtab name of the same
// function in fixture_inline_cxx_outofline (same source, nothing inlined):
// CxxInlineNamesMatchTheOutOfLineSymbols checks the literals below against
// it, so they are not a guess.
//
// Neither addr2line nor llvm-symbolizer is the reference, on purpose:
// `addr2line -f -i -C` (binutils 2.40) prints the demangled linkage name
// where DWARF has one (acc::shared, the class methods: the same as here),
// but for a function without one (internal linkage, anonymous namespace,
// lambdas) it prints the name of the function it was inlined into, which
// is wrong; `llvm-symbolizer` prints the bare DW_AT_name ("folded",
// "operator()"). Without a linkage name the name here is built from the
// DWARF scopes of the function's declaration, with C++ parameter types
// spelled as the demangler spells them ("unsigned long", "char const*"),
// a lambda as "{lambda(PARAMETERS)#N}" (N counting the closures of the same
// signature in the enclosing function, in DIE order, which is GCC's
// numbering order) and "const" for a const member function.
struct CxxInlineCase {
  const char* name;
  const char* marker;
};
const CxxInlineCase kCxxInlineCases[] = {
    {"acc::(anonymous namespace)::hidden(unsigned long)", "LINE:hidden_body"},
    {"acc::folded(unsigned long)", "LINE:folded_body"},
    {"acc::shared(unsigned long)", "LINE:shared_body"},
    {"acc::Accumulator::add(unsigned long)", "LINE:add_body"},
    {"acc::Scaled<long>::apply(long) const", "LINE:apply_body"},
    {"acc::run_all(unsigned long)::{lambda(int)#1}::operator()(int) const", "LINE:twist_body"},
    {"acc::run_all(unsigned long)::{lambda(int)#2}::operator()(int) const", "LINE:turn_body"},
};

TEST(BinarySymbolizerTest, CxxInlineFramesAreFullyQualified) {
  ASSERT_OPENED(symbolizer, kCxxInline);
  const ElfSymbol* caller = SymbolNamed(symbolizer, "acc::run_all(unsigned long)");
  ASSERT_NE(caller, nullptr);
  // Innermost frame name by line, over every address of the caller.
  std::map<uint32_t, std::set<std::string>> names_at_line;
  for (uint64_t vaddr = caller->start; vaddr < caller->start + caller->size; ++vaddr) {
    const auto frames = symbolizer.SymbolizeVaddr(vaddr);
    if (frames.size() < 2 || !frames[0].inlined) continue;
    EXPECT_EQ(frames.back().function, "acc::run_all(unsigned long)");
    names_at_line[frames[0].line].insert(frames[0].function);
  }
  for (const CxxInlineCase& c : kCxxInlineCases) {
    SCOPED_TRACE(c.marker);
    EXPECT_THAT(names_at_line[LineOf(kCxxSource, c.marker)], ElementsAre(c.name));
  }
}

TEST(BinarySymbolizerTest, CxxInlineNamesMatchTheOutOfLineSymbols) {
  ASSERT_OPENED(out_of_line, kCxxOutOfLine);
  for (const CxxInlineCase& c : kCxxInlineCases) {
    SCOPED_TRACE(c.name);
    // The demangled .symtab name (the reference for the literal) ...
    const ElfSymbol* symbol = SymbolNamed(out_of_line, c.name);
    ASSERT_NE(symbol, nullptr) << "no out-of-line symbol of that name";
    // ... and the DWARF name of the out-of-line copy agrees with it too.
    const auto frames = out_of_line.SymbolizeVaddr(symbol->start);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].function, c.name);
    EXPECT_EQ(frames[0].line, LineOf(kCxxSource, c.marker));
  }
}

// SymbolName keeps some names demangled: each answer is the symbol's own,
// in address order, backwards, and in steps that land in one slot.
TEST(BinarySymbolizerTest, SymbolNameIsTheSymbolsDemangledName) {
  // This test program: thousands of symbols, most of them C++ names.
  auto symbolizer = BinarySymbolizer::Open("/proc/self/exe", "", BinarySymbolizer::DwarfUse::kSkip);
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  const std::vector<ElfSymbol>& symbols = symbolizer->elf_symbols().symbols();
  ASSERT_GT(symbols.size(), 1000u);
  std::vector<size_t> order;
  for (size_t i = 0; i < symbols.size(); ++i) order.push_back(i);
  for (size_t i = symbols.size(); i-- > 0;) order.push_back(i);
  for (size_t start = 0; start < 4; ++start) {
    for (size_t i = start; i < symbols.size(); i += 256) order.push_back(i);
  }
  size_t demangled = 0;
  for (const size_t i : order) {
    const std::string want = symbols[i].name();
    ASSERT_EQ(symbolizer->SymbolName(symbols[i]), want) << i;
    demangled += want != symbols[i].mangled;
  }
  EXPECT_GT(demangled, 100u);
}

}  // namespace
}  // namespace sample
