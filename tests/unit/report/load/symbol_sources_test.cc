// Tests for the symbol sources, one per kind of DSO: each answers every
// offset (an [unknown] frame when it knows nothing), names frames with the
// offset into their symbol, and says where its names came from. The binary
// source reads the fixture ELF files of tests/fixtures/.
#include "report/load/symbol_sources.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/elf_symbols.h"
#include "tests/unit/symbolizer_test_util.h"

namespace sample::report {
namespace {

using sample::testing::LineOf;
using sample::testing::ScratchDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char* const kSym = FIXTURE_SYMBOLIZER_PATH;
const char* const kSymSource = FIXTURE_SYMBOLIZER_SOURCE;
const char* const kProg = FIXTURE_PROG_PATH;

// A frame as "name+0xOFFSET" (known), "name (inlined)" or "?name" (unknown),
// with " @srcline" when it has one.
std::string Show(const ResolvedFrame& frame) {
  std::string out = frame.known ? "" : "?";
  out += frame.name;
  if (frame.inlined) out += " (inlined)";
  if (frame.symbol_offset != UINT64_MAX) out += fmt::format("+{:#x}", frame.symbol_offset);
  if (!frame.srcline.empty()) out += " @" + frame.srcline;
  return out;
}

std::vector<std::vector<std::string>> Show(const std::vector<std::vector<ResolvedFrame>>& all) {
  std::vector<std::vector<std::string>> out;
  for (const auto& frames : all) {
    out.emplace_back();
    for (const ResolvedFrame& frame : frames) out.back().push_back(Show(frame));
  }
  return out;
}

TEST(SymbolSourcesTest, NoSourceNamesEveryOffsetUnknown) {
  NoSymbolSource none;
  const std::vector<uint64_t> offsets = {0x10, 0xabc};
  EXPECT_THAT(Show(none.Symbolize(offsets)),
              ElementsAre(ElementsAre("?[unknown] 0x10"), ElementsAre("?[unknown] 0xabc")));
  EXPECT_EQ(none.facts().source, "");
}

TEST(SymbolSourcesTest, KernelSymbolsNameAddressesFromTheRecordedKallsyms) {
  KernelSymbolSource kernel(
      ParseKallsyms(
          "ffffffff81000000 T _text\nffffffff81000100 t do_work\nffffffff81000200 T next_one\n"),
      "recorded kallsyms");
  const std::vector<uint64_t> addresses = {0xffffffff81000104, 0xffffffff81000000,
                                           0xffffffff80000000};
  EXPECT_THAT(Show(kernel.Symbolize(addresses)),
              ElementsAre(ElementsAre("do_work+0x4"), ElementsAre("_text+0x0"),
                          ElementsAre("?[unknown] 0xffffffff80000000")));
  EXPECT_EQ(kernel.facts().source, "recorded kallsyms (3 symbols)");
  EXPECT_TRUE(kernel.facts().warnings.empty());
}

TEST(SymbolSourcesTest, KernelWithoutSymbolsSaysSo) {
  KernelSymbolSource kernel({}, "recorded kallsyms");
  const std::vector<uint64_t> addresses = {0xffffffff81000104};
  EXPECT_THAT(Show(kernel.Symbolize(addresses)),
              ElementsAre(ElementsAre("?[unknown] 0xffffffff81000104")));
  EXPECT_EQ(kernel.facts().source, "none: the recording holds no kernel symbols");
}

TEST(SymbolSourcesTest, PerfMapNamesJitCodeByAbsoluteAddress) {
  PerfMapSymbolSource map(PerfMap::Parse("7f0000001000 40 jitted loop\n7f0000002000 10 other\n"));
  const std::vector<uint64_t> addresses = {0x7f0000001010, 0x7f0000002000, 0x7f0000003000};
  EXPECT_THAT(Show(map.Symbolize(addresses)),
              ElementsAre(ElementsAre("jitted loop+0x10"), ElementsAre("other+0x0"),
                          ElementsAre("?[unknown] 0x7f0000003000")));
  EXPECT_EQ(map.facts().source, "perf map");
}

TEST(SymbolSourcesTest, AnUnreadablePerfMapIsAWarningAndNamesNothing) {
  ScratchDir dir;
  // A directory where the map should be: no regular file.
  std::filesystem::create_directory(dir / "perf-1.map");
  PerfMapSymbolSource map(PerfMap::Load(dir / "perf-1.map", PerfMapOptions{}));
  const std::vector<uint64_t> addresses = {0x7f0000001010};
  EXPECT_THAT(Show(map.Symbolize(addresses)),
              ElementsAre(ElementsAre("?[unknown] 0x7f0000001010")));
  ASSERT_EQ(map.facts().warnings.size(), 1u);
  EXPECT_THAT(map.facts().warnings[0], HasSubstr("perf-1.map"));
  EXPECT_EQ(map.facts().source, "none: " + map.facts().warnings[0]);
}

// Anonymous executable memory without a map (libffi's trampolines, no
// JIT): many processes of a whole machine have some. --stats says so; no
// warning.
TEST(SymbolSourcesTest, AnAbsentPerfMapIsNoWarning) {
  ScratchDir dir;
  PerfMapSymbolSource map(PerfMap::Load(dir / "perf-1.map", PerfMapOptions{}));
  EXPECT_THAT(Show(map.Symbolize(std::vector<uint64_t>{0x7f0000001010})),
              ElementsAre(ElementsAre("?[unknown] 0x7f0000001010")));
  EXPECT_TRUE(map.facts().warnings.empty());
  EXPECT_THAT(map.facts().source, HasSubstr("perf-1.map"));
  EXPECT_THAT(map.facts().source, HasSubstr("the process wrote no perf map"));
}

class BinarySymbolSourceTest : public ::testing::Test {
 protected:
  std::unique_ptr<SymbolSource> Open(const std::string& path, const std::string& build_id,
                                     bool srclines, const EmbeddedBinaries* embedded = nullptr) {
    BinaryLocatorOptions options;
    options.files.use_debuginfod = false;
    locator_.emplace(std::move(options), RecordedCode{{}, embedded});
    return BinarySymbolSource::Open(*locator_, path, build_id, srclines);
  }

  // The file offset `delta` bytes into ELF symbol `name` of `path`.
  static uint64_t OffsetIn(const std::string& path, const std::string& name, uint64_t delta) {
    auto elf = ElfSymbols::Load(path);
    EXPECT_TRUE(elf) << elf.error().message;
    if (!elf) return 0;
    for (const ElfSymbol& symbol : elf->symbols()) {
      if (symbol.name() != name) continue;
      auto offset = elf->VaddrToFileOffset(symbol.start + delta);
      EXPECT_TRUE(offset);
      return offset.value_or(0);
    }
    ADD_FAILURE() << name << " not in " << path;
    return 0;
  }

  std::optional<BinaryLocator> locator_;
};

TEST_F(BinarySymbolSourceTest, NamesFunctionsWithInlineFramesAndSourceLines) {
  auto id = ReadElfBuildId(kSym);
  ASSERT_TRUE(id);
  auto source = Open(kSym, *id, /*srclines=*/true);
  EXPECT_EQ(source->facts().source, "recorded path + DWARF");
  EXPECT_FALSE(source->facts().missing);
  EXPECT_FALSE(source->facts().mismatched);

  const std::vector<uint64_t> offsets = {OffsetIn(kSym, "static_worker", 0), uint64_t{1} << 40};
  const auto frames = Show(source->Symbolize(offsets));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_THAT(frames[0], ElementsAre(fmt::format("static_worker+0x0 @fixture_symbolizer.c:{}",
                                                 LineOf(kSymSource, "LINE:static_worker_body"))));
  EXPECT_THAT(frames[1], ElementsAre("?[unknown] 0x10000000000"));
}

TEST_F(BinarySymbolSourceTest, InlinedCallsAreFramesOfTheirOwnBeforeTheirFunction) {
  auto source = Open(kSym, "", /*srclines=*/false);
  // Every instruction of uses_inline ends in uses_inline itself; some carry
  // the two inlined calls in front of it.
  bool saw_chain = false;
  for (uint64_t delta = 0; delta < 64; ++delta) {
    const std::vector<uint64_t> offsets = {OffsetIn(kSym, "uses_inline", delta)};
    const auto frames = Show(source->Symbolize(offsets))[0];
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames.back(), fmt::format("uses_inline+{:#x}", delta));
    if (frames.size() == 3) {
      EXPECT_THAT(frames, ElementsAre("inner_inline (inlined)", "outer_inline (inlined)",
                                      fmt::format("uses_inline+{:#x}", delta)));
      saw_chain = true;
      break;
    }
  }
  EXPECT_TRUE(saw_chain);
}

TEST_F(BinarySymbolSourceTest, AMissingBinaryNamesNothingAndIsCounted) {
  ScratchDir dir;
  auto source = Open(dir / "absent", "", false);
  const std::vector<uint64_t> offsets = {0x1234};
  EXPECT_THAT(Show(source->Symbolize(offsets)), ElementsAre(ElementsAre("?[unknown] 0x1234")));
  EXPECT_TRUE(source->facts().missing);
  EXPECT_EQ(source->facts().source, "none: not found");
}

TEST_F(BinarySymbolSourceTest, ABinaryOfAnotherBuildIsRefusedWithAWarning) {
  auto source = Open(kProg, std::string(40, 'f'), false);
  const std::vector<uint64_t> offsets = {0x1234};
  EXPECT_THAT(Show(source->Symbolize(offsets)), ElementsAre(ElementsAre("?[unknown] 0x1234")));
  EXPECT_TRUE(source->facts().mismatched);
  EXPECT_FALSE(source->facts().missing);
  ASSERT_EQ(source->facts().warnings.size(), 1u);
  EXPECT_THAT(source->facts().warnings[0], HasSubstr("--force uses it anyway"));
}

// A binary as a recording embeds it: one executable segment at file offset
// 0x1000 (vaddr 0x401000), the frames of two lookup addresses, two
// functions.
std::shared_ptr<EmbeddedBinary> HandBuilt(const std::string& path) {
  auto binary = std::make_shared<EmbeddedBinary>();
  binary->path = path;
  binary->build_id = "ab12";
  binary->segments.push_back({0x1000, 0x2000, 0x401000, 0x2000, true});
  binary->addresses.push_back({0x1010,
                               {{"inner", "/src/lib/inner.h", 7, true, UINT64_MAX},
                                {"work", "/src/work.c", 42, false, 0x10}}});
  binary->addresses.push_back({0x1f00, {{"", "/src/gen.c", 3, false, UINT64_MAX}}});
  binary->functions.push_back({0x401000, 0x100, "work"});
  binary->functions.push_back({0x401100, 0x20, "other"});
  binary->Normalize();
  return binary;
}

TEST(EmbeddedSymbolSourceTest, StoredFramesThenTheFunctionThenUnknown) {
  const auto binary = HandBuilt("/opt/app/bin");
  LocatedBinary located;
  located.source = "embedded";
  // 0x1010: stored frames; 0x1104: not stored, inside "other"; 0x1f00:
  // stored, nothing names it (a line all the same); 0x1800: in the
  // segment, in no function; 0x9000: in no segment.
  const std::vector<uint64_t> offsets = {0x1010, 0x1104, 0x1f00, 0x1800, 0x9000};
  EmbeddedSymbolSource with_lines(*binary, located, /*srclines=*/true);
  EXPECT_THAT(Show(with_lines.Symbolize(offsets)),
              ElementsAre(ElementsAre("inner (inlined) @inner.h:7", "work+0x10 @work.c:42"),
                          ElementsAre("other+0x4"), ElementsAre("?[unknown] 0x1f00 @gen.c:3"),
                          ElementsAre("?[unknown] 0x1800"), ElementsAre("?[unknown] 0x9000")));
  EmbeddedSymbolSource without(*binary, located, /*srclines=*/false);
  EXPECT_THAT(Show(without.Symbolize(offsets))[0], ElementsAre("inner (inlined)", "work+0x10"));
  EXPECT_EQ(without.facts().source, "embedded, 2 functions");
  EXPECT_FALSE(without.facts().missing);
  EXPECT_FALSE(without.facts().mismatched);
  EXPECT_TRUE(without.facts().warnings.empty());
}

// C++ names as a binary's tables hold them (with parameter lists) are
// shown without them, the full one kept as the signature; a JIT's names
// are shown as the JIT wrote them.
TEST(EmbeddedSymbolSourceTest, CxxNamesLoseTheirParametersJitNamesDoNot) {
  auto binary = std::make_shared<EmbeddedBinary>();
  binary->path = "/opt/app/bin";
  binary->segments.push_back({0x1000, 0x2000, 0x401000, 0x2000, true});
  binary->addresses.push_back({0x1010,
                               {{"acc::hot(int)", "", 0, true, UINT64_MAX},
                                {"int acc::work<int>(int) const", "", 0, false, 0x10}}});
  binary->functions.push_back({0x401000, 0x100, "int acc::work<int>(int) const"});
  binary->functions.push_back({0x401100, 0x20, "acc::other(char const*)"});
  binary->Normalize();
  EmbeddedSymbolSource source(*binary, LocatedBinary{}, /*srclines=*/false);
  const std::vector<uint64_t> offsets = {0x1010, 0x1104};
  const auto frames = source.Symbolize(offsets);
  EXPECT_THAT(Show(frames), ElementsAre(ElementsAre("acc::hot (inlined)", "acc::work<int>+0x10"),
                                        ElementsAre("acc::other+0x4")));
  EXPECT_EQ(frames[0][0].signature, "acc::hot(int)");
  EXPECT_EQ(frames[0][1].signature, "int acc::work<int>(int) const");
  EXPECT_EQ(frames[1][0].signature, "acc::other(char const*)");

  PerfMapSymbolSource map(PerfMap::Parse("7f0000001000 40 Interop.Sys.Read(SafeHandle, Byte*)\n"));
  const std::vector<uint64_t> addresses = {0x7f0000001000};
  const auto jit = map.Symbolize(addresses);
  EXPECT_EQ(jit[0][0].name, "Interop.Sys.Read(SafeHandle, Byte*)");
  EXPECT_EQ(jit[0][0].signature, "");
}

TEST_F(BinarySymbolSourceTest, AMissingBinaryTheRecordingEmbeddedIsNamedFromIt) {
  ScratchDir dir;
  EmbeddedBinaries embedded;
  embedded.Add(HandBuilt(dir / "absent"));
  auto source = Open(dir / "absent", "ab12", false, &embedded);
  const std::vector<uint64_t> offsets = {0x1010};
  EXPECT_THAT(Show(source->Symbolize(offsets)),
              ElementsAre(ElementsAre("inner (inlined)", "work+0x10")));
  EXPECT_EQ(source->facts().source, "embedded, 2 functions");
  EXPECT_FALSE(source->facts().missing);

  // A file of another build at the path: the same names, and the source
  // says what was turned down.
  auto id = ReadElfBuildId(kProg);
  ASSERT_TRUE(id);
  embedded.Add(HandBuilt(kProg));
  auto other = Open(kProg, "ab12", false, &embedded);
  EXPECT_THAT(Show(other->Symbolize(offsets)),
              ElementsAre(ElementsAre("inner (inlined)", "work+0x10")));
  EXPECT_EQ(other->facts().source,
            "embedded (the file found has build-id " + *id + "), 2 functions");
  EXPECT_TRUE(other->facts().mismatched);  // counted in --stats
  EXPECT_TRUE(other->facts().warnings.empty());
}

TEST_F(BinarySymbolSourceTest, EmbeddedFramesNameOffsetsAsTheBinaryDoes) {
  // What a recorder embeds is FramesAtFileOffset's answer: the report reads
  // the same frames from it as from the file, source lines and all.
  auto id = ReadElfBuildId(kSym);
  ASSERT_TRUE(id);
  std::vector<uint64_t> offsets = {OffsetIn(kSym, "static_worker", 0), uint64_t{1} << 40};
  for (uint64_t delta = 0; delta < 40; delta += 3) {
    offsets.push_back(OffsetIn(kSym, "uses_inline", delta));
  }
  auto symbolizer = BinarySymbolizer::Open(kSym, "");
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  auto binary = std::make_shared<EmbeddedBinary>();
  binary->path = "/gone/fixture_symbolizer";
  binary->build_id = *id;
  for (uint64_t offset : offsets) {
    binary->addresses.push_back({offset, FramesAtFileOffset(*symbolizer, offset, Basename(kSym))});
  }
  binary->Normalize();
  EmbeddedBinaries embedded;
  embedded.Add(binary);
  for (bool srclines : {false, true}) {
    const auto from_file = Show(Open(kSym, *id, srclines)->Symbolize(offsets));
    const auto from_recording =
        Show(Open(binary->path, *id, srclines, &embedded)->Symbolize(offsets));
    EXPECT_EQ(from_recording, from_file) << srclines;
  }
}

}  // namespace
}  // namespace sample::report
