// Tests for --call-graph's syntax and the attrs each mode sets: the stack
// size rules are the kernel's (a multiple of 8 below 65535), the register
// masks those of user_regs.h.
#include "libsample/perf/chain_capture.h"

#include <linux/perf_event.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sample {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kBaseSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID;

ChainCaptureOptions Parsed(std::string_view text) {
  auto options = ParseChainCapture(text);
  EXPECT_TRUE(options) << text << ": " << options.error().message;
  return options.value_or(ChainCaptureOptions{});
}

std::string Error(std::string_view text) {
  auto options = ParseChainCapture(text);
  EXPECT_FALSE(options) << text;
  return options ? std::string() : options.error().message;
}

TEST(ChainCaptureTest, ParsesPerfModes) {
  EXPECT_EQ(Parsed("no"), ChainCaptureOptions{});
  EXPECT_EQ(Parsed("fp"), (ChainCaptureOptions{ChainCapture::kFramePointer, false, 0}));
  EXPECT_EQ(Parsed("fp,leaf"),
            (ChainCaptureOptions{ChainCapture::kFramePointer, true, kDefaultLeafStackSize}));
  // -g is fp,leaf; perf's -g (the kernel's chain alone) is spelled fp.
  EXPECT_EQ(DefaultCallGraph(), Parsed("fp,leaf"));
  EXPECT_NE(DefaultCallGraph(), Parsed("fp"));
  EXPECT_EQ(Parsed("fp,leaf,1024"), (ChainCaptureOptions{ChainCapture::kFramePointer, true, 1024}));
  EXPECT_EQ(Parsed("dwarf"), (ChainCaptureOptions{ChainCapture::kDwarf, false, 8192}));
  EXPECT_EQ(Parsed("dwarf,16384"), (ChainCaptureOptions{ChainCapture::kDwarf, false, 16384}));
  EXPECT_EQ(DefaultChainCapture(ChainCapture::kDwarf), Parsed("dwarf"));
  EXPECT_EQ(DefaultChainCapture(ChainCapture::kFramePointer), Parsed("fp"));
}

TEST(ChainCaptureTest, StackSizesAreRoundedUpToEightAndBounded) {
  EXPECT_EQ(Parsed("dwarf,1").stack_size, 8u);
  EXPECT_EQ(Parsed("dwarf,4097").stack_size, 4104u);
  EXPECT_EQ(Parsed("dwarf,65528").stack_size, 65528u);
  EXPECT_EQ(Parsed("fp,leaf,100").stack_size, 104u);
  // 65529..65535 would round to 65536, which the kernel rejects.
  EXPECT_THAT(Error("dwarf,65529"), HasSubstr("at most 65528 bytes"));
  EXPECT_THAT(Error("dwarf,65535"), HasSubstr("at most 65528 bytes"));
  // Past 64 bits: named as written, not as a saturated 2^64 - 1.
  EXPECT_THAT(Error("dwarf,99999999999999999999999"),
              HasSubstr("stack size 99999999999999999999999: at most 65528 bytes"));
  EXPECT_THAT(Error("dwarf,0"), HasSubstr("'dwarf,0': stack size 0: must be at least 1 byte"));
  EXPECT_THAT(Error("dwarf,-8"), HasSubstr("stack size '-8': not a number of bytes"));
  EXPECT_THAT(Error("dwarf,8k"), HasSubstr("stack size '8k'"));
  EXPECT_THAT(Error("dwarf,"), HasSubstr("stack size '': not a number"));
  EXPECT_EQ(CheckStackSize(9).value(), 16u);
  EXPECT_FALSE(CheckStackSize(0));
  EXPECT_EQ(ParseStackSize("8192").value(), 8192u);
}

TEST(ChainCaptureTest, RejectsOtherSpellings) {
  for (const char* text :
       {"", "fp,", "fp,8192", "fp,leaf,1,2", "dwarf,8,9", "no,1", "DWARF", "leaf", "dwarf leaf"}) {
    EXPECT_THAT(Error(text), HasSubstr("expected fp, fp,leaf[,SIZE], dwarf[,SIZE] or no")) << text;
  }
  EXPECT_THAT(Error("lbr"), HasSubstr("not supported"));
}

perf_event_attr Applied(const ChainCaptureOptions& options, Arch arch) {
  perf_event_attr attr{};
  attr.sample_type = kBaseSampleType;
  auto applied = ApplyChainCapture(options, arch, &attr);
  EXPECT_TRUE(applied) << applied.error().message;
  return attr;
}

TEST(ChainCaptureTest, DwarfCopiesRegistersAndStackAndLeavesUserChainsOut) {
  const perf_event_attr attr = Applied(Parsed("dwarf,4096"), Arch::kX86_64);
  EXPECT_EQ(attr.sample_type, kBaseSampleType | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                                  PERF_SAMPLE_STACK_USER);
  EXPECT_EQ(attr.sample_regs_user, UnwindRegsMask(Arch::kX86_64));
  EXPECT_EQ(attr.sample_stack_user, 4096u);
  EXPECT_EQ(attr.exclude_callchain_user, 1u);
  EXPECT_EQ(Applied(Parsed("dwarf"), Arch::kAarch64).sample_regs_user,
            UnwindRegsMask(Arch::kAarch64));
}

TEST(ChainCaptureTest, LeafKeepsTheUserChainAndCopiesLittle) {
  const perf_event_attr attr = Applied(Parsed("fp,leaf"), Arch::kX86_64);
  EXPECT_EQ(attr.sample_type, kBaseSampleType | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                                  PERF_SAMPLE_STACK_USER);
  EXPECT_EQ(attr.sample_regs_user, LeafRegsMask(Arch::kX86_64));
  EXPECT_EQ(attr.sample_stack_user, kDefaultLeafStackSize);
  EXPECT_EQ(attr.exclude_callchain_user, 0u);
}

TEST(ChainCaptureTest, FramePointersAndNoneTouchOnlyTheCallchainBit) {
  const perf_event_attr fp = Applied(Parsed("fp"), Arch::kUnknown);
  EXPECT_EQ(fp.sample_type, kBaseSampleType | PERF_SAMPLE_CALLCHAIN);
  EXPECT_EQ(fp.sample_regs_user, 0u);
  EXPECT_EQ(fp.sample_stack_user, 0u);
  EXPECT_EQ(fp.exclude_callchain_user, 0u);
  // Applying "no" over a dwarf attr clears everything dwarf set.
  perf_event_attr attr = Applied(Parsed("dwarf"), Arch::kX86_64);
  ASSERT_TRUE(ApplyChainCapture(ChainCaptureOptions{}, Arch::kX86_64, &attr));
  EXPECT_EQ(attr.sample_type, kBaseSampleType);
  EXPECT_EQ(attr.sample_regs_user, 0u);
  EXPECT_EQ(attr.sample_stack_user, 0u);
  EXPECT_EQ(attr.exclude_callchain_user, 0u);
}

TEST(ChainCaptureTest, UnknownArchitectureCannotCopyRegisters) {
  perf_event_attr attr{};
  auto dwarf = ApplyChainCapture(Parsed("dwarf"), Arch::kUnknown, &attr);
  ASSERT_FALSE(dwarf);
  EXPECT_THAT(dwarf.error().message, HasSubstr("dwarf call graphs need this architecture's"));
  EXPECT_THAT(dwarf.error().message, HasSubstr("--call-graph fp"));
  auto leaf = ApplyChainCapture(Parsed("fp,leaf"), Arch::kUnknown, &attr);
  ASSERT_FALSE(leaf);
  EXPECT_THAT(leaf.error().message, HasSubstr("fp,leaf call graphs"));
}

TEST(ChainCaptureTest, RecordedAttrsSayWhichModeMadeThem) {
  for (const char* text : {"no", "fp", "fp,leaf", "fp,leaf,64", "dwarf", "dwarf,65528"}) {
    EXPECT_EQ(ChainCaptureFromAttr(Applied(Parsed(text), Arch::kX86_64)), Parsed(text)) << text;
  }
  EXPECT_EQ(DescribeChainCapture(Parsed("no")), "no");
  EXPECT_EQ(DescribeChainCapture(Parsed("fp")), "fp");
  EXPECT_EQ(DescribeChainCapture(Parsed("fp,leaf,512")), "fp,leaf (512 bytes of user stack)");
  EXPECT_EQ(DescribeChainCapture(Parsed("dwarf")), "dwarf (8192 bytes of user stack)");
  EXPECT_EQ(ChainCaptureName(Parsed("dwarf,64")), "dwarf");
  EXPECT_EQ(ChainCaptureName(Parsed("fp,leaf")), "fp,leaf");
}

}  // namespace
}  // namespace sample
