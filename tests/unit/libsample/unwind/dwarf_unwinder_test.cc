#include "libsample/unwind/dwarf_unwinder.h"

#include <gelf.h>

#include <gtest/gtest.h>

#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/embedded_binary.h"
#include "tests/unit/captured_stack.h"

namespace sample {
namespace {

using testing::EmbedCfi;
using testing::SelfSpace;
constexpr size_t kCopy = testing::kCapturedCopy;
constexpr size_t kMaxSteps = 8;

class DwarfUnwinderTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !defined(__x86_64__)
    GTEST_SKIP() << "the captured-stack tests are written for x86_64";
#else
    ASSERT_TRUE(testing::CaptureStack(&captured_));
    space_ = testing::SelfSpace();
#endif
  }

  UnwindRequest Request(size_t stack_bytes) {
    const U64List values(reinterpret_cast<const std::byte*>(captured_.perf_regs.data()),
                         captured_.perf_regs.size());
    UnwindRequest request;
    request.pid = 1;
    request.tid = 1;
    request.space = &space_;
    request.regs = *ToDwarfRegisters(Arch::kX86_64, UnwindRegsMask(Arch::kX86_64), values);
    request.stack = std::span(captured_.stack).first(std::min(stack_bytes, captured_.stack.size()));
    return request;
  }

  testing::CapturedStack captured_;
  UnwindSpace space_;
};

TEST_F(DwarfUnwinderTest, UnwindsThroughFunctionsWithoutFramePointers) {
  DwarfUnwinder unwinder;
  std::vector<uint64_t> pcs;
  const UnwindStop stop = unwinder.Unwind(Request(kCopy), &pcs);
  ASSERT_GE(pcs.size(), 5u) << UnwindStopName(stop);
  EXPECT_EQ(pcs[0], captured_.perf_regs[8]);
  // pcs[1] returns into LevelThree, whose own return address is pcs[2].
  EXPECT_EQ(pcs[2], captured_.return_addresses[0]);
  EXPECT_EQ(pcs[3], captured_.return_addresses[1]);
  EXPECT_EQ(pcs[4], captured_.return_addresses[2]);
  // The walk goes on into the test fixture's callers (gtest, main, libc);
  // 16 KiB may or may not reach _start, but it never fails for lack of CFI.
  EXPECT_TRUE(stop == UnwindStop::kComplete || stop == UnwindStop::kStackTooSmall)
      << UnwindStopName(stop);
  EXPECT_GT(pcs.size(), 6u);

  // The same process again reuses its Dwfl and gives the same frames.
  std::vector<uint64_t> again;
  EXPECT_EQ(unwinder.Unwind(Request(kCopy), &again), stop);
  EXPECT_EQ(again, pcs);
}

TEST_F(DwarfUnwinderTest, ShortStackCopyKeepsTheFramesFound) {
  DwarfUnwinder unwinder;
  std::vector<uint64_t> full;
  unwinder.Unwind(Request(kCopy), &full);
  // Enough for the leaf's frame only: the walk stops at the copy's end.
  std::vector<uint64_t> pcs;
  EXPECT_EQ(unwinder.Unwind(Request(16), &pcs), UnwindStop::kStackTooSmall);
  ASSERT_GE(pcs.size(), 1u);
  ASSERT_LT(pcs.size(), full.size());
  EXPECT_TRUE(std::equal(pcs.begin(), pcs.end(), full.begin()));
}

TEST_F(DwarfUnwinderTest, FrameLimitAndMissingModules) {
  // The limit counts this walk's frames, not what `pcs` held before (the
  // kernel's frames), in both walks.
  for (bool cached : {false, true}) {
    DwarfUnwinder unwinder(cached);
    UnwindRequest request = Request(kCopy);
    request.max_frames = 3;
    std::vector<uint64_t> pcs = {1, 2, 3, 4, 5, 6};
    EXPECT_EQ(unwinder.Unwind(request, &pcs), UnwindStop::kMaxDepth);
    EXPECT_EQ(pcs.size(), 9u) << cached;
  }
  DwarfUnwinder unwinder;
  UnwindRequest request = Request(kCopy);
  std::vector<uint64_t> pcs;

  // No modules at all: the sampled pc is kept, nothing more.
  UnwindSpace empty;
  empty.version = 7;
  request = Request(kCopy);
  request.pid = 2;
  request.space = &empty;
  pcs.clear();
  EXPECT_EQ(unwinder.Unwind(request, &pcs), UnwindStop::kNoModule);
  EXPECT_EQ(pcs, std::vector<uint64_t>{captured_.perf_regs[8]});

  // A space that changes version under the same pid is re-reported.
  request.space = &space_;
  pcs.clear();
  unwinder.Unwind(request, &pcs);
  EXPECT_GE(pcs.size(), 5u);
}

TEST_F(DwarfUnwinderTest, RegistersMissing) {
  DwarfUnwinder unwinder;
  UnwindRequest request = Request(kCopy);
  request.regs = DwarfRegisters{};
  std::vector<uint64_t> pcs;
  EXPECT_EQ(unwinder.Unwind(request, &pcs), UnwindStop::kNoRegisters);
  EXPECT_TRUE(pcs.empty());
}

// The stack a walk read is all it needs: a copy cut there walks the same,
// one 8 bytes shorter does not (its last read was the final word), for
// libdw's walk and the cached rules alike.
TEST_F(DwarfUnwinderTest, StackReachIsTheCopyTheWalkNeeds) {
  for (bool rules : {false, true}) {
    DwarfUnwinder unwinder(rules);
    std::vector<uint64_t> full;
    const UnwindStop stop = unwinder.Unwind(Request(kCopy), &full);
    const uint64_t reach = unwinder.last_stack_reach();
    ASSERT_GT(reach, 0u);
    ASSERT_LE(reach, kCopy);
    std::vector<uint64_t> cut;
    EXPECT_EQ(unwinder.Unwind(Request(reach), &cut), stop) << rules;
    EXPECT_EQ(cut, full) << rules;
    EXPECT_EQ(unwinder.last_stack_reach(), reach) << rules;
    std::vector<uint64_t> shorter;
    unwinder.Unwind(Request(reach - 8), &shorter);
    EXPECT_NE(shorter, full) << rules;
  }
}

TEST_F(DwarfUnwinderTest, CachedRulesWalkLikeLibdw) {
  // The same samples through libdw's walk and through the cached x86_64
  // rules: the same frames and the same reason to stop, whatever the copy.
  for (size_t bytes : {size_t{16}, size_t{200}, size_t{1024}, kCopy}) {
    for (size_t max_frames : {size_t{2}, size_t{256}}) {
      DwarfUnwinder libdw(/*use_rule_cache=*/false);
      DwarfUnwinder cached(/*use_rule_cache=*/true);
      UnwindRequest request = Request(bytes);
      request.max_frames = max_frames;
      std::vector<uint64_t> expected, actual;
      const UnwindStop expected_stop = libdw.Unwind(request, &expected);
      // Twice: the second walk runs on rules cached by the first.
      for (int round = 0; round < 2; ++round) {
        actual.clear();
        EXPECT_EQ(cached.Unwind(request, &actual), expected_stop)
            << bytes << " bytes, round " << round;
        EXPECT_EQ(actual, expected) << bytes << " bytes, round " << round;
      }
      // The cached rules did the walking, not a fallback to libdw.
      EXPECT_EQ(cached.counts().cached_walks, 2u);
      EXPECT_EQ(cached.counts().libdw_walks, 0u);
      EXPECT_EQ(libdw.counts().cached_walks, 0u);
    }
  }
}

// `space` with the modules whose file `missing` picks replaced by what
// EmbedCfi embeds of them for the walk `pcs` (kept in `store`).
UnwindSpace WithEmbedded(const UnwindSpace& space, const std::vector<uint64_t>& pcs,
                         const std::function<bool(const UnwindModule&)>& missing,
                         std::vector<std::unique_ptr<EmbeddedBinary>>& store) {
  UnwindSpace out;
  out.version = space.version + 100;
  for (const UnwindModule& module : space.modules) {
    if (!missing(module)) {
      out.modules.push_back(module);
      continue;
    }
    store.push_back(std::make_unique<EmbeddedBinary>(EmbedCfi(module, pcs)));
    UnwindModule embedded = module;
    embedded.binary.clear();
    embedded.embedded = store.back().get();
    out.modules.push_back(embedded);
  }
  return out;
}

std::string SelfExe() {
  char resolved[PATH_MAX];
  return realpath("/proc/self/exe", resolved) != nullptr ? resolved : "";
}

bool IsSelf(const UnwindModule& module) {
  char resolved[PATH_MAX];
  return realpath(module.binary.c_str(), resolved) != nullptr && SelfExe() == resolved;
}

TEST_F(DwarfUnwinderTest, EmbeddedSegmentsGiveTheFilesLoadBias) {
  for (const UnwindModule& module : space_.modules) {
    const EmbeddedBinary embedded = EmbedCfi(module, {});
    auto file = ElfFile::Open(module.binary);
    ASSERT_TRUE(file.has_value());
    // The mapping's file offset: the bias places it at the mapping's start.
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      if (std::stoull(line.substr(0, line.find('-')), nullptr, 16) != module.start) continue;
      std::istringstream in(line);
      std::string range, perms, offset;
      in >> range >> perms >> offset;
      EXPECT_EQ(embedded.LoadBias(module.start, std::stoull(offset, nullptr, 16)), module.bias)
          << module.binary;
    }
  }
}

TEST_F(DwarfUnwinderTest, EmbeddedCfiWalksLikeTheBinary) {
  // The walk with every file at hand, then with the test binary's file
  // missing (one embedded module among files), then with every file
  // missing (no Dwfl to attach: the cached rules alone): the same frames
  // and the same reason to stop, from the rows the walk's pcs need.
  for (size_t bytes : {size_t{200}, kCopy}) {
    DwarfUnwinder with_files;
    std::vector<uint64_t> expected;
    const UnwindStop expected_stop = with_files.Unwind(Request(bytes), &expected);
    ASSERT_GE(expected.size(), 2u);
    std::vector<std::unique_ptr<EmbeddedBinary>> store;
    const UnwindSpace self_missing = WithEmbedded(space_, expected, IsSelf, store);
    const UnwindSpace all_missing = WithEmbedded(
        space_, expected, [](const UnwindModule&) { return true; }, store);
    ASSERT_EQ(std::count_if(self_missing.modules.begin(), self_missing.modules.end(),
                            [](const UnwindModule& m) { return m.binary.empty(); }),
              1);
    for (const UnwindSpace* space : {&self_missing, &all_missing}) {
      DwarfUnwinder unwinder;
      for (int round = 0; round < 2; ++round) {  // the second on cached rules
        UnwindRequest request = Request(bytes);
        request.space = space;
        std::vector<uint64_t> pcs;
        EXPECT_EQ(unwinder.Unwind(request, &pcs), expected_stop) << bytes;
        EXPECT_EQ(pcs, expected) << bytes;
      }
      EXPECT_EQ(unwinder.counts().cached_walks, 2u);
      EXPECT_EQ(unwinder.counts().libdw_walks, 0u);
      EXPECT_EQ(unwinder.counts().embedded_cut_walks, 0u);
    }
  }
}

// CaptureLeaf, LevelThree, LevelTwo and LevelOne have no frame pointer: a
// frame-pointer chain taken in CaptureLeaf skips them up to the first
// caller that set one up. CFI steps find them until the chain goes on.
TEST_F(DwarfUnwinderTest, SkippedCallersStepUntilTheFramePointerChainGoesOn) {
  DwarfUnwinder unwinder;
  std::vector<uint64_t> walk;
  unwinder.Unwind(Request(kCopy), &walk);
  ASSERT_GE(walk.size(), 5u);
  // A chain whose first caller returns into LevelOne skipped LevelThree's
  // and LevelTwo's frames.
  FramelessCallers found = unwinder.SkippedCallers(Request(kCopy), walk[3], kMaxSteps);
  EXPECT_EQ(found.callers, (std::vector<uint64_t>{walk[1], walk[2]}));
  EXPECT_TRUE(found.joined);
  EXPECT_FALSE(found.stack_too_small);
  EXPECT_FALSE(found.framed_at_pc);
  // callers_reach is what a copy must hold for the same frames: a copy one
  // word shorter finds one frame less.
  const uint64_t reach = found.callers_reach;
  ASSERT_GT(reach, 0u);
  EXPECT_EQ(reach % 8, 0u);
  EXPECT_GT(found.stack_reach, reach);  // the last step read LevelTwo's frame
  const FramelessCallers exact = unwinder.SkippedCallers(Request(reach), walk[3], kMaxSteps);
  EXPECT_EQ(exact.callers, found.callers);
  EXPECT_FALSE(exact.joined);
  EXPECT_TRUE(exact.stack_too_small);
  const FramelessCallers short_copy =
      unwinder.SkippedCallers(Request(reach - 8), walk[3], kMaxSteps);
  EXPECT_EQ(short_copy.callers, std::vector<uint64_t>{walk[1]});
  EXPECT_TRUE(short_copy.stack_too_small);
  // The step limit keeps the frames found so far.
  found = unwinder.SkippedCallers(Request(kCopy), walk[3], 1);
  EXPECT_EQ(found.callers, std::vector<uint64_t>{walk[1]});
  EXPECT_FALSE(found.joined);
  // No registers to step from: nothing.
  UnwindRequest none = Request(kCopy);
  none.regs = DwarfRegisters{};
  EXPECT_TRUE(unwinder.SkippedCallers(none, walk[3], kMaxSteps).callers.empty());
}

// The checks of many processes mapping the same files (a program running
// thousands of children) read each file once: no Dwfl per process, which
// opened and mapped every file for each. Each process's space is its own
// version, as the report gives each pid.
TEST_F(DwarfUnwinderTest, SkippedCallersOfManyProcessesOpenEachFileOnce) {
  DwarfUnwinder unwinder;
  std::vector<uint64_t> walk;
  DwarfUnwinder().Unwind(Request(kCopy), &walk);
  ASSERT_GE(walk.size(), 5u);
  const auto open_fds = [] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
      ++n;
    }
    return n;
  };
  const size_t before = open_fds();
  std::vector<UnwindSpace> spaces(100, space_);
  for (size_t pid = 0; pid < spaces.size(); ++pid) {
    spaces[pid].version = 1000 + pid;
    UnwindRequest request = Request(kCopy);
    request.pid = static_cast<uint32_t>(100 + pid);
    request.space = &spaces[pid];
    const FramelessCallers found = unwinder.SkippedCallers(request, walk[3], kMaxSteps);
    ASSERT_EQ(found.callers, (std::vector<uint64_t>{walk[1], walk[2]})) << pid;
  }
  // At most a file (and its debug file) a module; a Dwfl a process kept
  // 32 processes' worth.
  EXPECT_LE(open_fds(), before + 2 * space_.modules.size());
}

// A pc in a function that has made rbp its frame pointer (this test's
// own, past its prologue): nothing skipped, whatever the stack holds.
TEST_F(DwarfUnwinderTest, AFramedFunctionSkipsNothing) {
  DwarfUnwinder unwinder;
  std::vector<uint64_t> walk;
  unwinder.Unwind(Request(kCopy), &walk);
  ASSERT_GE(walk.size(), 6u);
  UnwindRequest request = Request(0);  // no stack read
  request.regs.pc = walk[5];
  const FramelessCallers found = unwinder.SkippedCallers(request, 0, kMaxSteps);
  EXPECT_TRUE(found.callers.empty());
  EXPECT_TRUE(found.framed_at_pc);
  EXPECT_TRUE(found.joined);
  EXPECT_EQ(found.stack_reach, 0u);
}

// A caller in the file's recorded range but outside where its ELF layout
// puts it (V8 maps its builtins there) is still the file's: it is kept,
// as the embedded module's range keeps it.
TEST_F(DwarfUnwinderTest, ACallerInAFilesRangeBeyondItsLayoutIsKept) {
  DwarfUnwinder with_files;
  std::vector<uint64_t> walk;
  with_files.Unwind(Request(kCopy), &walk);
  ASSERT_GE(walk.size(), 5u);
  UnwindSpace space = space_;
  auto self = std::find_if(space.modules.begin(), space.modules.end(), IsSelf);
  ASSERT_NE(self, space.modules.end());
  // Past the ELF file's whole layout (its data segments too).
  const uint64_t beyond = self->end + 0x4000000;
  self->end += 0x8000000;
  ++space.version;
  // The leaf's return address moved there.
  std::vector<std::byte> stack(captured_.stack.begin(), captured_.stack.end());
  bool moved = false;
  for (size_t at = 0; at + 8 <= stack.size() && !moved; at += 8) {
    uint64_t word;
    std::memcpy(&word, stack.data() + at, 8);
    if (word != walk[1]) continue;
    std::memcpy(stack.data() + at, &beyond, 8);
    moved = true;
  }
  ASSERT_TRUE(moved);
  UnwindRequest request = Request(kCopy);
  request.space = &space;
  request.stack = stack;
  DwarfUnwinder unwinder;
  EXPECT_EQ(unwinder.SkippedCallers(request, walk[3], kMaxSteps).callers,
            std::vector<uint64_t>{beyond});
}

TEST_F(DwarfUnwinderTest, EmbeddedCfiFindsTheCallerAFramePointerChainSkips) {
  DwarfUnwinder with_files;
  std::vector<uint64_t> walk;
  with_files.Unwind(Request(kCopy), &walk);
  ASSERT_GE(walk.size(), 5u);
  const std::vector<uint64_t> expected =
      with_files.SkippedCallers(Request(kCopy), walk[3], kMaxSteps).callers;
  ASSERT_FALSE(expected.empty());  // CaptureLeaf has no frame pointer
  std::vector<std::unique_ptr<EmbeddedBinary>> store;
  const UnwindSpace all_missing = WithEmbedded(
      space_, walk, [](const UnwindModule&) { return true; }, store);
  DwarfUnwinder unwinder;
  UnwindRequest request = Request(kCopy);
  request.space = &all_missing;
  EXPECT_EQ(unwinder.SkippedCallers(request, walk[3], kMaxSteps).callers, expected);
}

TEST_F(DwarfUnwinderTest, AWalkThatNeedsLibdwInEmbeddedCodeEndsThere) {
  DwarfUnwinder with_files;
  std::vector<uint64_t> expected;
  with_files.Unwind(Request(kCopy), &expected);
  ASSERT_GE(expected.size(), 5u);
  std::vector<std::unique_ptr<EmbeddedBinary>> store;
  UnwindSpace self_missing = WithEmbedded(space_, expected, IsSelf, store);
  // The row of LevelOne's frame (pcs[3] returns into it) is not usable:
  // the cached rules cannot step it, and libdw cannot read embedded rows.
  EmbeddedBinary* self = store.back().get();
  const UnwindModule& module =
      *std::find_if(self_missing.modules.begin(), self_missing.modules.end(),
                    [](const UnwindModule& m) { return m.binary.empty(); });
  ASSERT_NE(self->CfiRowAt(expected[3] - 1 - module.bias), nullptr);
  for (CfiRow& row : self->cfi) {
    if (row.start <= expected[3] - 1 - module.bias && expected[3] - 1 - module.bias < row.end) {
      row.rule.usable = false;
    }
  }
  DwarfUnwinder unwinder;
  UnwindRequest request = Request(kCopy);
  request.space = &self_missing;
  std::vector<uint64_t> pcs;
  EXPECT_EQ(unwinder.Unwind(request, &pcs), UnwindStop::kNoCfi);
  EXPECT_EQ(pcs, std::vector<uint64_t>(expected.begin(), expected.begin() + 4));
  EXPECT_EQ(unwinder.counts().embedded_cut_walks, 1u);
  EXPECT_EQ(unwinder.counts().libdw_walks, 0u);

  // libdw's own walk (the cache off) stops at the first embedded frame.
  DwarfUnwinder libdw(/*use_rule_cache=*/false);
  pcs.clear();
  EXPECT_EQ(libdw.Unwind(request, &pcs), UnwindStop::kNoCfi);
  EXPECT_EQ(pcs, std::vector<uint64_t>{expected[0]});
  EXPECT_EQ(libdw.counts().embedded_cut_walks, 1u);
  EXPECT_EQ(libdw.counts().libdw_walks, 1u);

  // With no file at all, libdw has nothing to attach with: the sampled pc.
  const UnwindSpace all_missing = WithEmbedded(
      space_, expected, [](const UnwindModule&) { return true; }, store);
  request.space = &all_missing;
  request.pid = 3;
  pcs.clear();
  EXPECT_EQ(libdw.Unwind(request, &pcs), UnwindStop::kNoCfi);
  EXPECT_EQ(pcs, std::vector<uint64_t>{expected[0]});
  EXPECT_EQ(libdw.counts().embedded_cut_walks, 2u);
}

// A frame pointer saved as itself (a looping chain, as a JIT's frames were
// seen to give): the walk ends where the chain starts to repeat, not at
// the frame limit with copies of one frame.
TEST_F(DwarfUnwinderTest, ALoopingFramePointerChainEndsWhereItRepeats) {
  DwarfUnwinder with_files;
  std::vector<uint64_t> expected;
  with_files.Unwind(Request(kCopy), &expected);
  ASSERT_GE(expected.size(), 3u);
  std::vector<std::unique_ptr<EmbeddedBinary>> store;
  UnwindSpace embedded = WithEmbedded(space_, expected, IsSelf, store);
  store.back()->cfi.clear();  // no CFI: frame pointers are followed
  UnwindRequest request = Request(kCopy);
  request.space = &embedded;
  // rbp points at the stack's first word, which holds rbp itself, and the
  // word after it a return address into this binary.
  std::vector<uint64_t> words = {request.regs.sp, expected[2], 0, 0};
  request.stack = std::as_bytes(std::span(words));
  constexpr size_t kRbp = 6;
  ASSERT_TRUE(request.regs.Has(kRbp));
  request.regs.value[kRbp] = request.regs.sp;
  request.max_frames = 64;
  DwarfUnwinder unwinder;
  std::vector<uint64_t> pcs;
  EXPECT_EQ(unwinder.Unwind(request, &pcs), UnwindStop::kLoop);
  EXPECT_EQ(pcs, (std::vector<uint64_t>{expected[0], expected[2]}));
}

int AddLoadBias(dl_phdr_info* info, size_t, void* data) {
  auto* biases = static_cast<std::map<std::string, uint64_t>*>(data);
  std::string name = info->dlpi_name;
  if (name.empty()) {  // the executable
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return 0;
    name.assign(buf, static_cast<size_t>(n));
  }
  char resolved[PATH_MAX];
  if (realpath(name.c_str(), resolved) != nullptr) (*biases)[resolved] = info->dlpi_addr;
  return 0;
}

TEST(ElfLoadBiasTest, MatchesTheDynamicLoader) {
  // Every file this process maps executable: the bias computed from its
  // mapping is the one ld.so applied.
  std::map<std::string, uint64_t> loader;
  dl_iterate_phdr(AddLoadBias, &loader);
  size_t checked = 0;
  for (const UnwindModule& m : SelfSpace().modules) {
    char resolved[PATH_MAX];
    if (realpath(m.binary.c_str(), resolved) == nullptr || !loader.contains(resolved)) continue;
    EXPECT_EQ(m.bias, loader[resolved]) << m.binary;
    ++checked;
  }
  EXPECT_GE(checked, 2u);  // the test binary and libc at least
}

TEST(ElfLoadBiasTest, PackedSegmentsOfLld) {
  // lld packs segments: the executable one shares a page with the read-only
  // one before it, so the mapping's offset lies in both.
  if (system("command -v ld.lld >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "ld.lld is not installed (scripts/setup.sh installs lld)";
  }
  char dir_template[] = "/tmp/lld_bias.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  {
    std::ofstream source(dir + "/p.c");
    source << "int main(void) { return 0; }\n";
  }
  const std::string binary = dir + "/p";
  ASSERT_EQ(system(("cc -O1 -fPIE -pie -fuse-ld=lld -o " + binary + " " + dir + "/p.c").c_str()),
            0);
  auto file = ElfFile::Open(binary);
  ASSERT_TRUE(file.has_value()) << file.error().message;
  size_t count = 0;
  ASSERT_EQ(elf_getphdrnum(file->get(), &count), 0);
  std::optional<GElf_Phdr> text;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    gelf_getphdr(file->get(), static_cast<int>(i), &phdr);
    if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X)) text = phdr;
  }
  ASSERT_TRUE(text.has_value());
  // The kernel maps the page holding the segment's start.
  const uint64_t base = 0x7f1234560000;
  const uint64_t start = base + (text->p_vaddr & ~uint64_t{0xfff});
  const uint64_t pgoff = text->p_offset & ~uint64_t{0xfff};
  auto bias = ElfLoadBias(binary, start, pgoff);
  ASSERT_TRUE(bias.has_value()) << bias.error().message;
  EXPECT_EQ(*bias, base);
  system(("rm -rf " + dir).c_str());
}

TEST(ElfLoadBiasTest, SharedObjectAndErrors) {
  // This test binary is PIE or not; either way its text mapping's bias must
  // place the mapping's file offset at the mapping's start.
  const UnwindSpace space = SelfSpace();
  ASSERT_FALSE(space.modules.empty());
  EXPECT_FALSE(ElfLoadBias("/nonexistent", 0, 0).has_value());
  EXPECT_FALSE(ElfLoadBias("/proc/self/maps", 0, 0).has_value());
  auto far = ElfLoadBias(space.modules[0].binary, 0x10000000, uint64_t{1} << 40);
  ASSERT_FALSE(far.has_value());
  EXPECT_NE(far.error().message.find("no loadable segment"), std::string::npos);
}

}  // namespace
}  // namespace sample
