// Tests for the report's unwinding stage with the binaries it finds: a
// --call-graph dwarf sample of the test's own stack (captured_stack.h),
// resolved through a process table holding this process's executable
// mappings, unwinds the same whether the test binary's file is at hand or
// only the CFI a recording embedded of it (its load bias from the embedded
// segments, its rules from the embedded rows).
#include "report/load/stack_unwinding.h"

#include <limits.h>
#include <linux/perf_event.h>
#include <stdlib.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/symbols/elf_symbols.h"
#include "tests/unit/captured_stack.h"

namespace sample::report {
namespace {

using sample::testing::CapturedStack;
using sample::testing::kCapturedCopy;

constexpr uint32_t kPid = 77;
const std::string kGone = "/nonexistent-sample-test/unit_tests";

std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? resolved : "";
}

class StackUnwindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sample::testing::CaptureStack(&captured_)) {
      GTEST_SKIP() << "the captured-stack tests are written for x86_64";
    }
    attr_.sample_type =
        PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr_.sample_regs_user = UnwindRegsMask(Arch::kX86_64);
    attr_.sample_stack_user = kCapturedCopy;
  }

  // The user chain of the captured sample in a process whose executable
  // mappings are this one's, the test binary's named `self_path` (recorded
  // with its real build-id).
  std::vector<uint64_t> Unwind(const std::string& self_path, const EmbeddedBinaries* embedded,
                               UnwindStats* stats) {
    ProcessTable processes;
    format::Metadata build_ids;
    MapSelf(self_path, processes, build_ids);
    StackUnwindingOptions options;
    options.arch = Arch::kX86_64;
    options.binaries.files.use_debuginfod = false;
    options.recorded.embedded = embedded;
    StackUnwinding unwinding(options, processes, build_ids);
    const SampleRecord sample = Sample();
    EXPECT_TRUE(unwinding.Queue(0, sample, attr_));
    std::vector<uint64_t> chain;
    unwinding.Flush([&](size_t, std::span<const uint64_t> frames) {
      chain.assign(frames.begin(), frames.end());
    });
    *stats = unwinding.stats();
    // The kernel's part (none here) and the marker, then the user frames.
    EXPECT_FALSE(chain.empty());
    if (!chain.empty()) chain.erase(chain.begin());
    return chain;
  }

  // The captured sample, of process kPid.
  SampleRecord Sample() const {
    SampleRecord sample;
    sample.pid = sample.tid = kPid;
    sample.ip = captured_.perf_regs[8];
    sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
    sample.user_regs = U64List(reinterpret_cast<const std::byte*>(captured_.perf_regs.data()),
                               captured_.perf_regs.size());
    sample.user_stack = captured_.stack;
    return sample;
  }

  // Process kPid with this one's executable mappings, the test binary's
  // named `self_path` (recorded with its real build-id).
  static void MapSelf(const std::string& self_path, ProcessTable& processes,
                      format::Metadata& build_ids) {
    const std::string self = RealPath("/proc/self/exe");
    for (const sample::testing::SelfMapping& m : sample::testing::SelfExecutableMappings()) {
      const std::string named = RealPath(m.path) == self ? self_path : m.path;
      processes.ApplyMmap(kPid, m.start, m.end - m.start, m.pgoff, named);
      if (auto id = ReadElfBuildId(m.path); id && !id->empty()) build_ids.emplace_back(named, *id);
    }
  }

  CapturedStack captured_;
  perf_event_attr attr_{};
};

TEST_F(StackUnwindingTest, AMissingBinaryUnwindsFromTheCfiTheRecordingEmbedded) {
  UnwindStats with_file;
  const std::vector<uint64_t> expected = Unwind(RealPath("/proc/self/exe"), nullptr, &with_file);
  ASSERT_GE(expected.size(), 5u);
  EXPECT_EQ(expected[2], captured_.return_addresses[0]);
  EXPECT_EQ(with_file.missing_binaries, 0u);
  EXPECT_EQ(with_file.embedded_binaries, 0u);

  // Gone, and nothing embedded: the walk cannot go through it.
  UnwindStats gone;
  EXPECT_NE(Unwind(kGone, nullptr, &gone), expected);
  EXPECT_EQ(gone.missing_binaries, 1u);

  // Gone, but the recording embedded its segments and the rows the walk
  // needs: the same frames, and nothing missing.
  const std::string self = RealPath("/proc/self/exe");
  EmbeddedBinaries embedded;
  for (const UnwindModule& module : sample::testing::SelfSpace().modules) {
    if (RealPath(module.binary) != self) continue;
    auto binary = std::make_shared<EmbeddedBinary>(sample::testing::EmbedCfi(module, expected));
    binary->path = kGone;
    binary->build_id = ReadElfBuildId(self).value_or("");
    ASSERT_FALSE(binary->cfi.empty());
    embedded.Add(binary);
  }
  ASSERT_EQ(embedded.size(), 1u);
  UnwindStats from_recording;
  EXPECT_EQ(Unwind(kGone, &embedded, &from_recording), expected);
  EXPECT_EQ(from_recording.missing_binaries, 0u);
  EXPECT_EQ(from_recording.embedded_binaries, 1u);
  EXPECT_EQ(from_recording.stops, with_file.stops);
  EXPECT_EQ(from_recording.embedded_cut_walks, 0u);
}

// -g (fp,leaf): a sample whose function had set up its frame needs no
// check; once one at a pc has shown it, the others there are not queued
// (the kernel's chain stands), until the process's mappings change.
TEST_F(StackUnwindingTest, AFramedLeafIsCheckedOncePerPc) {
  UnwindStats dwarf;
  const std::vector<uint64_t> walk = Unwind(RealPath("/proc/self/exe"), nullptr, &dwarf);
  ASSERT_GE(walk.size(), 6u);
  ProcessTable processes;
  format::Metadata build_ids;
  MapSelf(RealPath("/proc/self/exe"), processes, build_ids);
  StackUnwindingOptions options;
  options.arch = Arch::kX86_64;
  options.binaries.files.use_debuginfod = false;
  StackUnwinding unwinding(options, processes, build_ids);
  attr_.sample_type |= PERF_SAMPLE_CALLCHAIN;
  ASSERT_EQ(StackModeOf(attr_), StackMode::kLeafFix);
  // At walk[5] (past CaptureStack's prologue: rbp is its frame pointer),
  // with a chain that goes on to a made-up caller; and at the captured pc
  // (CaptureLeaf, no frame pointer).
  const std::vector<uint64_t> framed{static_cast<uint64_t>(PERF_CONTEXT_USER), walk[5], 0x1234};
  const std::vector<uint64_t> frameless{static_cast<uint64_t>(PERF_CONTEXT_USER), walk[0], walk[3]};
  std::vector<uint64_t> regs = captured_.perf_regs;
  const auto sample_at = [&](const std::vector<uint64_t>& chain) {
    SampleRecord sample = Sample();
    regs[8] = chain[1];  // the ip
    sample.ip = chain[1];
    sample.user_regs = U64List(reinterpret_cast<const std::byte*>(regs.data()), regs.size());
    sample.callchain = U64List(reinterpret_cast<const std::byte*>(chain.data()), chain.size());
    return sample;
  };
  std::vector<std::vector<uint64_t>> chains;
  const auto flush = [&] {
    unwinding.Flush([&](size_t, std::span<const uint64_t> frames) {
      chains.emplace_back(frames.begin(), frames.end());
    });
  };
  EXPECT_TRUE(unwinding.Queue(0, sample_at(framed), attr_));
  EXPECT_TRUE(unwinding.Queue(1, sample_at(frameless), attr_));
  flush();
  ASSERT_EQ(chains.size(), 2u);
  EXPECT_EQ(chains[0], framed);
  EXPECT_EQ(chains[1], (std::vector<uint64_t>{frameless[0], walk[0], walk[1], walk[2], walk[3]}));
  // Known now: the framed pc's chain stands; the frameless one is checked.
  EXPECT_FALSE(unwinding.Queue(2, sample_at(framed), attr_));
  EXPECT_TRUE(unwinding.Queue(3, sample_at(frameless), attr_));
  flush();
  EXPECT_EQ(unwinding.stats().leaf_samples, 4u);
  EXPECT_EQ(unwinding.stats().leaf_steps_joined, 4u);
  EXPECT_EQ(unwinding.stats().leaf_callers_inserted, 2u);
  // A chain the kernel cut is always checked (its copy may go further).
  EXPECT_TRUE(unwinding.Queue(4, sample_at(framed), attr_, /*cut=*/true));
  flush();
  // New mappings: the pc may hold other code; checked again.
  processes.ApplyMmap(kPid, 0x10000, 0x1000, 0, "/nonexistent-sample-test/lib.so");
  EXPECT_TRUE(unwinding.Queue(5, sample_at(framed), attr_));
  flush();
  EXPECT_EQ(chains.back(), framed);
}

}  // namespace
}  // namespace sample::report
