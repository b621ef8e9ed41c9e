// BuildEmbeddedBinary against the real files: for many offsets of bundled
// workloads (with DWARF and inline frames, stripped of every symbol, with
// CFI only in .debug_frame, in the binary or a separate debug file) and of
// this process's libc, the embedded tables answer as the files do: frames
// as FramesAtFileOffset, functions as ElfSymbols or the FDEs, CFI rules as
// libdwfl gives them to the unwinder, load biases as ElfLoadBias, code as
// the file's bytes; and the code bounds are kept.
#include "libsample/symbols/symbol_embedding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/cfi_functions.h"
#include "tests/unit/libsample/symbols/embedding_reference.h"

namespace sample {
namespace {

using testing::CallReturnOffsets;
using testing::DwflRules;
using testing::FileBytes;
using testing::SelfMappings;
using testing::StrideOffsets;

const char* const kInline = WORKLOAD_INLINE_PATH;
const char* const kInlineStripped = WORKLOAD_INLINE_STRIPPED_PATH;
const char* const kHits = WORKLOAD_HITS_PATH;  // ET_EXEC
const char* const kDebugFrame = WORKLOAD_UNWIND_DEBUGFRAME_PATH;
const char* const kDebugFrameDebug = WORKLOAD_UNWIND_DEBUGFRAME_DEBUG_PATH;
const char* const kDebugFrameStripped = WORKLOAD_UNWIND_DEBUGFRAME_STRIPPED_PATH;

// Counts mismatches and reports the first few, so that a wrong table
// does not print a hundred thousand failures.
class Mismatches {
 public:
  explicit Mismatches(std::string what) : what_(std::move(what)) {}
  ~Mismatches() { EXPECT_EQ(count_, 0u) << what_ << ": mismatches (the first ones above)"; }
  void Add(const std::string& message) {
    if (count_++ < 8) ADD_FAILURE() << what_ << ": " << message;
  }

 private:
  std::string what_;
  size_t count_ = 0;
};

bool SameRule(const X86FrameRule& a, const X86FrameRule& b) {
  return CfiRow{0, 0, a} == CfiRow{0, 0, b};
}

std::vector<uint64_t> Distinct(std::vector<uint64_t> offsets) {
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  return offsets;
}

void ExpectSortedTables(const EmbeddedBinary& embedded) {
  for (size_t i = 1; i < embedded.addresses.size(); ++i) {
    EXPECT_LT(embedded.addresses[i - 1].offset, embedded.addresses[i].offset);
  }
  for (size_t i = 1; i < embedded.functions.size(); ++i) {
    EXPECT_LT(embedded.functions[i - 1].start, embedded.functions[i].start);
  }
  for (size_t i = 1; i < embedded.cfi.size(); ++i) {
    EXPECT_LE(embedded.cfi[i - 1].end, embedded.cfi[i].start) << "rows overlap";
  }
  for (size_t i = 1; i < embedded.code.size(); ++i) {
    EXPECT_LE(embedded.code[i - 1].vaddr + embedded.code[i - 1].bytes.size(),
              embedded.code[i].vaddr)
        << "code overlaps";
  }
}

// The frames, function and CFI row of each offset, as the file gives them.
void ExpectOffsetsMatchFile(const EmbeddingRequest& request, const EmbeddedBinary& embedded) {
  auto symbolizer = BinarySymbolizer::Open(request.binary, request.debug);
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  const ElfSymbols& elf = symbolizer->elf_symbols();
  auto fdes = CfiFunctions::Open(request.binary);
  const DwflRules rules(request.binary, request.debug);
  ASSERT_TRUE(rules.ok());
  const std::string base = Basename(request.path);
  Mismatches frames("frames"), functions("functions"), cfi("CFI rows");
  for (uint64_t offset : request.offsets) {
    const std::string at = fmt::format("offset {:#x}", offset);
    const auto* embedded_frames = embedded.FramesAt(offset);
    if (embedded_frames == nullptr) {
      frames.Add(at + " has no frames");
    } else if (*embedded_frames != FramesAtFileOffset(*symbolizer, offset, base)) {
      frames.Add(at + " differs");
    }
    const std::optional<uint64_t> vaddr = elf.FileOffsetToVaddr(offset);
    EXPECT_EQ(embedded.FileOffsetToVaddr(offset), vaddr) << at;
    if (!vaddr) continue;
    const EmbeddedFunction* function = embedded.FunctionAt(*vaddr);
    uint64_t end = 0;
    std::optional<uint64_t> fde;
    if (fdes) fde = fdes->StartOf(*vaddr);
    if (const ElfSymbol* symbol = elf.Find(*vaddr, &end)) {
      if (function == nullptr || function->start != symbol->start ||
          function->size != end - symbol->start || function->name != symbol->name()) {
        functions.Add(at + " is not in its symbol " + symbol->name());
      }
    } else if (fde) {
      if (function == nullptr || function->name != fmt::format("{}+{:#x}", base, *fde) ||
          function->start < *fde || *vaddr - function->start >= function->size) {
        functions.Add(at + " is not in its FDE's function");
      }
    } else if (function != nullptr) {
      functions.Add(at + " has a function: " + function->name);
    }
    const auto found = rules.At(*vaddr);
    const CfiRow* row = embedded.CfiRowAt(*vaddr);
    if (!found) {
      if (row != nullptr) cfi.Add(at + " has a row libdwfl does not");
    } else if (row == nullptr) {
      cfi.Add(at + " has no row");
    } else if (!SameRule(row->rule, found->rule) || row->start < found->start ||
               row->end > found->end) {
      cfi.Add(at + " has another rule or range");
    }
  }
}

// The code is the file's, and each leaf's function has its code when no
// bound stood in the way.
void ExpectCodeMatchesFile(const EmbeddingRequest& request, const EmbeddedBinary& embedded,
                           bool bounded) {
  auto elf = ElfSymbols::Load(request.binary);
  ASSERT_TRUE(elf) << elf.error().message;
  const std::vector<char> file = FileBytes(request.binary);
  for (const EmbeddedCode& code : embedded.code) {
    const std::optional<uint64_t> offset = elf->VaddrToFileOffset(code.vaddr);
    ASSERT_TRUE(offset);
    ASSERT_LE(*offset + code.bytes.size(), file.size());
    EXPECT_EQ(std::memcmp(code.bytes.data(), file.data() + *offset, code.bytes.size()), 0)
        << fmt::format("code at {:#x}", code.vaddr);
  }
  if (bounded) return;
  EXPECT_EQ(embedded.code_omitted, 0u);
  Mismatches missing("leaf code");
  for (uint64_t offset : request.leaf_offsets) {
    const auto vaddr = elf->FileOffsetToVaddr(offset);
    const EmbeddedFunction* function = vaddr ? embedded.FunctionAt(*vaddr) : nullptr;
    if (function == nullptr) continue;
    auto after =
        std::upper_bound(embedded.code.begin(), embedded.code.end(), function->start,
                         [](uint64_t v, const EmbeddedCode& code) { return v < code.vaddr; });
    if (after == embedded.code.begin() || std::prev(after)->vaddr + std::prev(after)->bytes.size() <
                                              function->start + function->size) {
      missing.Add(fmt::format("{} ({:#x}) has no code", function->name, function->start));
    }
  }
}

// Build, the counts it adds kept in `limits`.
EmbeddedBinary BuildCounting(const EmbeddingRequest& request, EmbeddingLimits& limits) {
  auto embedded = BuildEmbeddedBinary(request, limits);
  EXPECT_TRUE(embedded) << embedded.error().message;
  return embedded ? std::move(*embedded) : EmbeddedBinary{};
}

EmbeddedBinary Build(const EmbeddingRequest& request, EmbeddingLimits limits = {}) {
  auto embedded = BuildEmbeddedBinary(request, limits);
  EXPECT_TRUE(embedded) << embedded.error().message;
  return embedded ? std::move(*embedded) : EmbeddedBinary{};
}

// Offsets every `stride` bytes of the code plus the lookup offsets of
// direct calls to function starts (as ElfSymbols or the FDEs know them).
std::vector<uint64_t> OffsetsOf(const std::string& binary, uint64_t stride, size_t calls) {
  auto elf = ElfSymbols::Load(binary);
  EXPECT_TRUE(elf) << elf.error().message;
  if (!elf) return {};
  auto fdes = CfiFunctions::Open(binary);
  std::vector<uint64_t> offsets = StrideOffsets(*elf, stride);
  const auto returns = CallReturnOffsets(
      *elf, FileBytes(binary),
      [&](uint64_t target) {
        const ElfSymbol* symbol = elf->Find(target);
        return (symbol != nullptr && symbol->start == target) ||
               (fdes && fdes->StartOf(target) == target);
      },
      calls);
  EXPECT_GT(returns.size(), 0u) << binary << ": no call found";
  offsets.insert(offsets.end(), returns.begin(), returns.end());
  return offsets;
}

EmbeddingRequest RequestFor(const std::string& binary, const std::string& debug = "",
                            uint64_t leaf_every = 1) {
  EmbeddingRequest request{binary, binary, debug, OffsetsOf(binary, 7, 5000), {}};
  const std::vector<uint64_t> distinct = Distinct(request.offsets);
  for (size_t i = 0; i < distinct.size(); i += leaf_every)
    request.leaf_offsets.push_back(distinct[i]);
  return request;
}

TEST(SymbolEmbeddingTest, InlineWorkloadWithDwarf) {
  const EmbeddingRequest request = RequestFor(kInline);
  const EmbeddedBinary embedded = Build(request);
  auto elf = ElfSymbols::Load(kInline);
  ASSERT_TRUE(elf);
  EXPECT_EQ(embedded.path, kInline);
  EXPECT_EQ(embedded.build_id, elf->build_id());
  EXPECT_FALSE(embedded.build_id.empty());
  EXPECT_FALSE(embedded.fixed_address);  // PIE
  EXPECT_EQ(embedded.addresses.size(), Distinct(request.offsets).size());
  ExpectSortedTables(embedded);
  ExpectOffsetsMatchFile(request, embedded);
  ExpectCodeMatchesFile(request, embedded, /*bounded=*/false);
  // The hot loop's frames: spin_inlined inside hot_outer.
  const bool inlined = std::any_of(
      embedded.addresses.begin(), embedded.addresses.end(), [](const EmbeddedAddress& a) {
        return a.frames.size() == 2 && a.frames[0].inlined && a.frames[0].name == "spin_inlined" &&
               a.frames[1].name == "hot_outer";
      });
  EXPECT_TRUE(inlined) << "no address inside the inlined spin_inlined";
  EXPECT_FALSE(embedded.cfi.empty());
}

TEST(SymbolEmbeddingTest, StrippedCopyNamesFunctionsByTheirFdes) {
  EmbeddingRequest request = RequestFor(kInlineStripped);
  request.path = "/opt/elsewhere/inline-renamed";  // as recorded: names come from it
  const EmbeddedBinary embedded = Build(request);
  ExpectSortedTables(embedded);
  ExpectOffsetsMatchFile(request, embedded);
  ExpectCodeMatchesFile(request, embedded, /*bounded=*/false);
  // hot_outer, known only by its FDE, starts where its symbol did.
  auto unstripped = ElfSymbols::Load(kInline);
  ASSERT_TRUE(unstripped);
  const auto hot = std::find_if(unstripped->symbols().begin(), unstripped->symbols().end(),
                                [](const ElfSymbol& s) { return s.name() == "hot_outer"; });
  ASSERT_NE(hot, unstripped->symbols().end());
  const EmbeddedFunction* function = embedded.FunctionAt(hot->start + 1);
  ASSERT_NE(function, nullptr);
  EXPECT_EQ(function->name, fmt::format("inline-renamed+{:#x}", hot->start));
  EXPECT_EQ(function->start, hot->start);
  EXPECT_GE(function->size, hot->size);
}

TEST(SymbolEmbeddingTest, DebugFrameRowsFromTheBinaryOrItsDebugFile) {
  const EmbeddingRequest in_binary = RequestFor(kDebugFrame);
  const EmbeddedBinary from_binary = Build(in_binary);
  ExpectSortedTables(from_binary);
  ExpectOffsetsMatchFile(in_binary, from_binary);

  const EmbeddingRequest split = RequestFor(kDebugFrameStripped, kDebugFrameDebug);
  const EmbeddedBinary from_debug = Build(split);
  ExpectSortedTables(from_debug);
  ExpectOffsetsMatchFile(split, from_debug);
  ExpectCodeMatchesFile(split, from_debug, /*bounded=*/false);

  const EmbeddingRequest alone = RequestFor(kDebugFrameStripped);
  const EmbeddedBinary without = Build(alone);
  ExpectOffsetsMatchFile(alone, without);

  // level_two has CFI only in .debug_frame: rows there from either file,
  // none without the debug file.
  auto elf = ElfSymbols::Load(kDebugFrame);
  ASSERT_TRUE(elf);
  const auto level_two = std::find_if(elf->symbols().begin(), elf->symbols().end(),
                                      [](const ElfSymbol& s) { return s.name() == "level_two"; });
  ASSERT_NE(level_two, elf->symbols().end());
  const uint64_t inside = level_two->start + level_two->size / 2;
  ASSERT_NE(from_binary.CfiRowAt(inside), nullptr);
  ASSERT_NE(from_debug.CfiRowAt(inside), nullptr);
  EXPECT_EQ(*from_binary.CfiRowAt(inside), *from_debug.CfiRowAt(inside));
  EXPECT_EQ(without.CfiRowAt(inside), nullptr);
}

// The return address of a call from libc into this test (qsort calling
// its comparator), as a lookup offset into libc's file.
uint64_t g_return_address = 0;
__attribute__((noinline)) int CompareRecordingCaller(const void* a, const void* b) {
  g_return_address = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

bool IsLibc(const std::string& path) {
  const std::string name = Basename(path);
  return name.starts_with("libc.so") || name.starts_with("libc-");
}

TEST(SymbolEmbeddingTest, LibcOfThisProcess) {
  int items[] = {5, 3, 9, 1};
  qsort(items, 4, sizeof(int), CompareRecordingCaller);
  std::string libc;
  std::optional<uint64_t> return_offset;  // none when a sanitizer intercepts qsort
  const auto mappings = SelfMappings();
  for (const auto& m : mappings) {
    if (!IsLibc(m.path)) continue;
    libc = m.path;
    if (g_return_address >= m.start && g_return_address < m.end) {
      return_offset = g_return_address - m.start + m.pgoff - 1;
    }
  }
  if (libc.empty()) GTEST_SKIP() << "no libc.so mapped in this process (static build?)";
  EmbeddingRequest request{libc, libc, "", OffsetsOf(libc, 61, 20000), {}};
  if (return_offset) request.offsets.push_back(*return_offset);
  const std::vector<uint64_t> distinct = Distinct(request.offsets);
  for (size_t i = 0; i < distinct.size(); i += 13) request.leaf_offsets.push_back(distinct[i]);
  const EmbeddedBinary embedded = Build(request);
  ExpectSortedTables(embedded);
  ExpectOffsetsMatchFile(request, embedded);
  ExpectCodeMatchesFile(request, embedded, /*bounded=*/false);
  if (return_offset) {
    ASSERT_NE(embedded.FramesAt(*return_offset), nullptr);
    EXPECT_FALSE(embedded.FramesAt(*return_offset)->back().name.empty());
  }
  size_t checked = 0;
  for (const auto& m : mappings) {
    if (m.path != libc) continue;
    auto expected = ElfLoadBias(libc, m.start, m.pgoff);
    ASSERT_TRUE(expected) << expected.error().message;
    EXPECT_EQ(embedded.LoadBias(m.start, m.pgoff), *expected) << fmt::format("{:#x}", m.start);
    ++checked;
  }
  EXPECT_GE(checked, 2u);
}

TEST(SymbolEmbeddingTest, LoadBiasAsElfLoadBias) {
  for (const char* path : {kInline, kHits}) {
    SCOPED_TRACE(path);
    EmbeddingRequest request{path, path, "", {}, {}};
    const EmbeddedBinary embedded = Build(request);
    auto elf = ElfSymbols::Load(path);
    ASSERT_TRUE(elf);
    EXPECT_EQ(embedded.fixed_address, std::string(path) == kHits);
    ASSERT_EQ(embedded.segments.size(), elf->segments().size());
    // A mapping of each segment's pages, as the loader makes them.
    for (const ElfSymbols::LoadSegment& segment : elf->segments()) {
      const uint64_t pgoff = segment.offset & ~uint64_t{0xfff};
      const uint64_t start =
          std::string(path) == kHits ? segment.vaddr & ~uint64_t{0xfff} : 0x7f1234560000 + pgoff;
      auto expected = ElfLoadBias(path, start, pgoff);
      ASSERT_TRUE(expected) << expected.error().message;
      EXPECT_EQ(embedded.LoadBias(start, pgoff), *expected);
    }
  }
}

TEST(SymbolEmbeddingTest, CodeBoundsAreKeptAndCounted) {
  const EmbeddingRequest request = RequestFor(kInline);
  EmbeddingLimits unlimited;
  const EmbeddedBinary whole = Build(request, unlimited);
  ASSERT_GE(whole.code.size(), 2u);
  uint64_t total = 0;
  uint64_t largest = 0;
  for (const EmbeddedCode& code : whole.code) {
    total += code.bytes.size();
    largest = std::max<uint64_t>(largest, code.bytes.size());
  }
  // Each function with samples counts once, whichever bound left it out.
  const EmbeddedBinary none = Build(request, EmbeddingLimits{0, uint64_t{1} << 30});
  EXPECT_TRUE(none.code.empty());
  const uint64_t functions = none.code_omitted;
  EXPECT_GE(functions, whole.code.size());
  EmbeddingLimits empty_budget{uint64_t{1} << 20, 0};
  const EmbeddedBinary broke = Build(request, empty_budget);
  EXPECT_TRUE(broke.code.empty());
  EXPECT_EQ(broke.code_omitted, functions);
  // The budget is shared: what one binary takes, the next cannot.
  EmbeddingLimits shared{uint64_t{1} << 20, total - 1};
  auto first = BuildEmbeddedBinary(request, shared);
  ASSERT_TRUE(first);
  uint64_t used = 0;
  for (const EmbeddedCode& code : first->code) used += code.bytes.size();
  EXPECT_EQ(shared.code_budget, total - 1 - used);
  EXPECT_GT(first->code_omitted, 0u);
  EXPECT_LT(used, total);
  // Functions over the per-function bound are left out, the others kept.
  const EmbeddedBinary small = Build(request, EmbeddingLimits{largest - 1, uint64_t{1} << 30});
  EXPECT_GT(small.code_omitted, 0u);
  for (const EmbeddedCode& code : small.code) EXPECT_LT(code.bytes.size(), largest);
  ExpectCodeMatchesFile(request, small, /*bounded=*/true);
}

// Code only for functions with samples enough; the rest of the tables
// whatever their samples. Samples at a leaf given twice add up.
TEST(SymbolEmbeddingTest, CodeOfFunctionsWithFewSamplesIsLeftOut) {
  EmbeddingRequest request = RequestFor(kInline);
  EmbeddingLimits unlimited;
  const EmbeddedBinary whole = Build(request, unlimited);
  ASSERT_GE(whole.code.size(), 2u);
  // Samples of event 1 at each leaf of the first code range's functions,
  // of event 0 everywhere.
  const EmbeddedCode& hot = whole.code.front();
  auto elf = ElfSymbols::Load(kInline);
  ASSERT_TRUE(elf) << elf.error().message;
  const auto in_hot = [&](uint64_t offset) {
    const auto vaddr = elf->FileOffsetToVaddr(offset);
    return vaddr && *vaddr >= hot.vaddr && *vaddr - hot.vaddr < hot.bytes.size();
  };
  for (const uint64_t offset : request.leaf_offsets) {
    // Event 1's: event 0 has too few samples for any function.
    if (in_hot(offset)) request.leaf_samples.push_back(LeafSamples{offset, 1, 2});
    request.leaf_samples.push_back(LeafSamples{offset, 0, 1});
  }
  EmbeddingLimits limits;
  limits.min_event_samples = {UINT64_MAX, 2};
  const EmbeddedBinary cold = BuildCounting(request, limits);
  ASSERT_EQ(cold.code.size(), 1u);
  EXPECT_EQ(cold.code.front(), hot);
  EXPECT_EQ(cold.code_omitted, limits.cold_functions);
  EXPECT_GT(limits.cold_functions, 0u);
  EXPECT_EQ(cold.functions, whole.functions);
  EXPECT_EQ(cold.addresses, whole.addresses);
  EXPECT_EQ(cold.cfi, whole.cfi);
  // Two samples of event 1 at a cold leaf, counted apart: one more
  // function has code.
  const auto cold_leaf =
      std::ranges::find_if(request.leaf_offsets, [&](uint64_t o) { return !in_hot(o); });
  ASSERT_NE(cold_leaf, request.leaf_offsets.end());
  request.leaf_samples.push_back(LeafSamples{*cold_leaf, 1, 1});
  request.leaf_samples.push_back(LeafSamples{*cold_leaf, 1, 1});
  EmbeddingLimits again;
  again.min_event_samples = {UINT64_MAX, 2};
  const EmbeddedBinary warmer = BuildCounting(request, again);
  EXPECT_EQ(again.cold_functions + 1, limits.cold_functions);
  EXPECT_GT(warmer.code.size(), cold.code.size());
}

TEST(SymbolEmbeddingTest, OffsetsInAnyOrderWithRepeatsGiveTheSameTables) {
  EmbeddingRequest request = RequestFor(kInline, "", 5);
  const EmbeddedBinary sorted = Build(request);
  std::reverse(request.offsets.begin(), request.offsets.end());
  const std::vector<uint64_t> repeats(request.offsets.begin(), request.offsets.begin() + 100);
  request.offsets.insert(request.offsets.end(), repeats.begin(), repeats.end());
  std::reverse(request.leaf_offsets.begin(), request.leaf_offsets.end());
  EXPECT_EQ(Build(request), sorted);
  // A leaf missing from the lookup offsets is looked up all the same.
  request.offsets.clear();
  const EmbeddedBinary leaves_only = Build(request);
  EXPECT_EQ(leaves_only.addresses.size(), Distinct(request.leaf_offsets).size());
  EXPECT_EQ(leaves_only.code, sorted.code);
}

// Embedding with frames learnt by earlier embeddings gives the tables
// embedding without them does: the first time (learning), and again with
// what was learnt (every offset then known: no DWARF read), with a
// budget that learns only part, and for offsets the earlier ones did not
// ask for.
void ExpectLearntFramesChangeNothing(EmbeddingRequest request) {
  const EmbeddedBinary reference = Build(request);
  KnownFrames known;
  request.known = &known;
  EXPECT_EQ(Build(request), reference) << request.binary << ": learning";
  EXPECT_FALSE(known.ranges().empty());
  for (const uint64_t offset : request.offsets) {
    EXPECT_TRUE(known.Covers(offset)) << fmt::format("{:#x} not learnt", offset);
  }
  const KnownFrames learnt = known;
  EXPECT_EQ(Build(request), reference) << request.binary << ": all known";
  EXPECT_EQ(known, learnt) << "nothing is learnt when nothing is missing";
  // Functions and their units learnt, not the whole binary.
  KnownFrames units;
  request.known = &units;
  EmbeddingLimits no_whole;
  no_whole.max_learnt_binary = 0;
  EXPECT_EQ(Build(request, no_whole), reference) << request.binary << ": learning units";
  EXPECT_FALSE(units.ranges().empty());
  EXPECT_EQ(Build(request), reference) << request.binary << ": units known";
  // A little learnt: the rest from the files.
  KnownFrames some;
  request.known = &some;
  EmbeddingLimits small;
  small.learn_budget = 512;
  EXPECT_EQ(Build(request, small), reference) << request.binary << ": a small budget";
  EXPECT_EQ(Build(request), reference) << request.binary << ": partly known";
  // Other offsets than those learnt from.
  for (uint64_t& offset : request.offsets) offset += 3;
  request.leaf_offsets.clear();
  request.known = nullptr;
  const EmbeddedBinary shifted = Build(request);
  request.known = &known;
  EXPECT_EQ(Build(request), shifted) << request.binary << ": other offsets";
}

TEST(SymbolEmbeddingTest, LearntFramesGiveTheSameTables) {
  ExpectLearntFramesChangeNothing(RequestFor(kInline, "", 3));
  EmbeddingRequest stripped = RequestFor(kInlineStripped, "", 3);
  stripped.path = "/opt/elsewhere/inline-renamed";
  ExpectLearntFramesChangeNothing(stripped);
  ExpectLearntFramesChangeNothing(RequestFor(kDebugFrame, kDebugFrameDebug, 3));
  ExpectLearntFramesChangeNothing(RequestFor(kHits, "", 3));
}

// Words of stack copies are looked up where a call ends at them (every
// real call site), or at a function's start or one byte past it; most
// other words are left out. With frames known for the other offsets but
// not for a kept word, the DWARF is read all the same.
TEST(SymbolEmbeddingTest, ScannedWordsAreLookedUpWhereACallEnds) {
  auto elf = ElfSymbols::Load(kInline);
  ASSERT_TRUE(elf) << elf.error().message;
  const std::vector<char> file = FileBytes(kInline);
  const std::vector<uint64_t> calls = CallReturnOffsets(
      *elf, file, [](uint64_t) { return true; }, 1000);
  ASSERT_GT(calls.size(), 3u);
  const std::vector<uint64_t> stride = StrideOffsets(*elf, 3);
  const ElfSymbol* hot = nullptr;
  for (const ElfSymbol& symbol : elf->symbols()) {
    if (symbol.name() == "hot_outer") hot = &symbol;
  }
  ASSERT_NE(hot, nullptr);
  uint64_t hot_offset = 0;
  for (const auto& segment : elf->segments()) {
    if (segment.executable && hot->start - segment.vaddr < segment.filesz)
      hot_offset = segment.offset + (hot->start - segment.vaddr);
  }
  ASSERT_NE(hot_offset, 0u);

  EmbeddingRequest request{kInline, kInline, "", {}, {}};
  request.scanned_offsets = stride;
  request.scanned_offsets.insert(request.scanned_offsets.end(), calls.begin(), calls.end());
  // The function's start as a word, and one byte past it.
  request.scanned_offsets.push_back(hot_offset - 1);
  request.scanned_offsets.push_back(hot_offset);
  const EmbeddedBinary embedded = Build(request);
  const auto looked_up = [&](uint64_t offset) { return embedded.FramesAt(offset) != nullptr; };
  for (const uint64_t offset : calls) EXPECT_TRUE(looked_up(offset)) << offset;
  EXPECT_TRUE(looked_up(hot_offset - 1));
  EXPECT_TRUE(looked_up(hot_offset));
  const size_t kept = std::count_if(stride.begin(), stride.end(), looked_up);
  EXPECT_LT(kept * 5, stride.size()) << kept << " of " << stride.size() << " words kept";
  // The same words beside the stride offsets as plain lookups: the frames
  // of those kept are the ones every lookup gets.
  EmbeddingRequest plain{kInline, kInline, "", stride, {}};
  plain.scanned_offsets = request.scanned_offsets;
  const EmbeddedBinary reference = Build(plain);
  EXPECT_EQ(reference.addresses.size(), Distinct(stride).size() + embedded.addresses.size() - kept);
  for (const EmbeddedAddress& a : embedded.addresses) {
    ASSERT_NE(reference.FramesAt(a.offset), nullptr);
    EXPECT_EQ(*reference.FramesAt(a.offset), a.frames);
  }
  // Known frames for the stride offsets' bytes only: the kept words are
  // read from the DWARF.
  KnownFrames known;
  EmbeddingRequest learn{kInline, kInline, "", stride, {}};
  learn.known = &known;
  EmbeddingLimits bytes_only;
  bytes_only.max_learnt_function = 0;
  bytes_only.max_learnt_binary = 0;
  Build(learn, bytes_only);
  ASSERT_TRUE(
      std::all_of(stride.begin(), stride.end(), [&](uint64_t o) { return known.Covers(o); }));
  ASSERT_FALSE(
      std::all_of(calls.begin(), calls.end(), [&](uint64_t o) { return known.Covers(o); }));
  plain.known = &known;
  EmbeddingLimits no_learning;
  no_learning.learn_budget = 0;
  EXPECT_EQ(Build(plain, no_learning), reference);
}

TEST(SymbolEmbeddingTest, AFileThatIsNotElfIsAnErrorNamingIt) {
  const std::string source = std::string(FIXTURE_PROG_SOURCE);
  EmbeddingRequest request{"/bin/app", source, "", {0x1000}, {}};
  EmbeddingLimits limits;
  auto embedded = BuildEmbeddedBinary(request, limits);
  ASSERT_FALSE(embedded);
  EXPECT_NE(embedded.error().message.find(source), std::string::npos) << embedded.error().message;
}

}  // namespace
}  // namespace sample
