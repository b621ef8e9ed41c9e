#include "libsample/perf/user_regs.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <vector>

namespace sample {
namespace {

U64List ListOf(const std::vector<uint64_t>& words) {
  return U64List(reinterpret_cast<const std::byte*>(words.data()), words.size());
}

TEST(UserRegsTest, ArchFromMachine) {
  EXPECT_EQ(ArchFromMachine("x86_64"), Arch::kX86_64);
  EXPECT_EQ(ArchFromMachine("aarch64"), Arch::kAarch64);
  EXPECT_EQ(ArchFromMachine("riscv64"), Arch::kUnknown);
  EXPECT_EQ(UnwindRegsMask(Arch::kUnknown), 0u);
}

TEST(UserRegsTest, X86MaskAndDwarfNumbering) {
  const uint64_t mask = UnwindRegsMask(Arch::kX86_64);
  EXPECT_EQ(std::popcount(mask), 17);
  // In perf order: AX BX CX DX SI DI BP SP IP R8..R15.
  std::vector<uint64_t> values = {100, 101, 102, 103, 104, 105, 106, 107, 0x401000,
                                  108, 109, 110, 111, 112, 113, 114, 115};
  auto regs = ToDwarfRegisters(Arch::kX86_64, mask, ListOf(values));
  ASSERT_TRUE(regs.has_value());
  EXPECT_EQ(regs->count, 17u);
  EXPECT_EQ(regs->value[0], 100u);  // rax
  EXPECT_EQ(regs->value[1], 103u);  // rdx
  EXPECT_EQ(regs->value[2], 102u);  // rcx
  EXPECT_EQ(regs->value[3], 101u);  // rbx
  EXPECT_EQ(regs->value[6], 106u);  // rbp
  EXPECT_EQ(regs->value[7], 107u);  // rsp
  EXPECT_EQ(regs->value[8], 108u);  // r8
  EXPECT_EQ(regs->value[15], 115u);
  EXPECT_EQ(regs->value[16], 0x401000u);  // return address column = pc
  EXPECT_EQ(regs->pc, 0x401000u);
  EXPECT_EQ(regs->sp, 107u);
  EXPECT_EQ(regs->present, (uint64_t{1} << 17) - 1);
}

// A 32-bit process's registers, sampled with the x86_64 mask: the low 32
// bits of AX..IP in i386 DWARF numbering, R8..R15 dropped.
TEST(UserRegsTest, I386ProcessOnAnX86Kernel) {
  const uint64_t mask = UnwindRegsMask(Arch::kI386);
  EXPECT_EQ(mask, UnwindRegsMask(Arch::kX86_64));
  std::vector<uint64_t> values = {0x100, 0x101, 0x102, 0x103, 0x104, 0x105, 0x106,
                                  0xdeadbeef00000107, 0xf7f01000, 0, 0, 0, 0, 0, 0, 0, 0};
  auto regs = ToDwarfRegisters(Arch::kI386, mask, ListOf(values));
  ASSERT_TRUE(regs.has_value());
  EXPECT_EQ(regs->count, 9u);
  EXPECT_EQ(regs->value[0], 0x100u);  // eax
  EXPECT_EQ(regs->value[1], 0x102u);  // ecx
  EXPECT_EQ(regs->value[2], 0x103u);  // edx
  EXPECT_EQ(regs->value[3], 0x101u);  // ebx
  EXPECT_EQ(regs->value[4], 0x107u);  // esp, its low 32 bits
  EXPECT_EQ(regs->value[5], 0x106u);  // ebp
  EXPECT_EQ(regs->value[6], 0x104u);  // esi
  EXPECT_EQ(regs->value[7], 0x105u);  // edi
  EXPECT_EQ(regs->value[8], 0xf7f01000u);  // return address column = pc
  EXPECT_EQ(regs->pc, 0xf7f01000u);
  EXPECT_EQ(regs->sp, 0x107u);
  EXPECT_EQ(regs->present, (uint64_t{1} << 9) - 1);
}

TEST(UserRegsTest, X86LeafMaskAndPerfsWiderMask) {
  // BP, SP, IP only.
  auto leaf = ToDwarfRegisters(Arch::kX86_64, LeafRegsMask(Arch::kX86_64), ListOf({6, 7, 8}));
  ASSERT_TRUE(leaf.has_value());
  EXPECT_EQ(leaf->value[6], 6u);
  EXPECT_EQ(leaf->sp, 7u);
  EXPECT_EQ(leaf->pc, 8u);
  EXPECT_FALSE(leaf->Has(3));
  // perf's mask also carries FLAGS, CS, SS: they are skipped.
  const uint64_t perf_mask = UnwindRegsMask(Arch::kX86_64) | (0x7ull << 9);
  std::vector<uint64_t> values(20);
  for (size_t i = 0; i < values.size(); ++i) values[i] = i;
  auto regs = ToDwarfRegisters(Arch::kX86_64, perf_mask, ListOf(values));
  ASSERT_TRUE(regs.has_value());
  EXPECT_EQ(regs->pc, 8u);
  EXPECT_EQ(regs->value[8], 12u);  // R8 follows FLAGS, CS, SS
  EXPECT_EQ(regs->value[15], 19u);
}

TEST(UserRegsTest, Aarch64Numbering) {
  const uint64_t mask = UnwindRegsMask(Arch::kAarch64);
  EXPECT_EQ(std::popcount(mask), 33);
  std::vector<uint64_t> values(33);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 1000 + i;
  auto regs = ToDwarfRegisters(Arch::kAarch64, mask, ListOf(values));
  ASSERT_TRUE(regs.has_value());
  EXPECT_EQ(regs->count, 32u);
  EXPECT_EQ(regs->value[29], 1029u);  // fp
  EXPECT_EQ(regs->value[30], 1030u);  // lr
  EXPECT_EQ(regs->sp, 1031u);
  EXPECT_EQ(regs->value[31], 1031u);
  EXPECT_EQ(regs->pc, 1032u);
  auto leaf =
      ToDwarfRegisters(Arch::kAarch64, LeafRegsMask(Arch::kAarch64), ListOf({29, 30, 31, 32}));
  ASSERT_TRUE(leaf.has_value());
  EXPECT_EQ(leaf->value[30], 30u);
  EXPECT_EQ(leaf->pc, 32u);
}

TEST(UserRegsTest, MissingPcOrSpOrCountMismatch) {
  // SP without IP.
  EXPECT_FALSE(ToDwarfRegisters(Arch::kX86_64, 1ull << 7, ListOf({1})).has_value());
  // IP without SP.
  EXPECT_FALSE(ToDwarfRegisters(Arch::kX86_64, 1ull << 8, ListOf({1})).has_value());
  // Fewer values than the mask has bits.
  EXPECT_FALSE(ToDwarfRegisters(Arch::kX86_64, 0x180, ListOf({1})).has_value());
  EXPECT_FALSE(ToDwarfRegisters(Arch::kUnknown, 0x180, ListOf({1, 2})).has_value());
}

}  // namespace
}  // namespace sample

namespace sample {
namespace {

TEST(UserRegsTest, CountBitsAsPopcount) {
  for (const uint64_t mask : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}, uint64_t{0xff0fff},
                              uint64_t{0x8000000000000001}, uint64_t{0x123456789abcdef0}}) {
    EXPECT_EQ(CountBits(mask), static_cast<size_t>(std::popcount(mask))) << mask;
  }
}

// UserPcAndSp gives ToDwarfRegisters' pc and sp, and nothing where it
// gives nothing, for each architecture and mask.
TEST(UserRegsTest, PcAndSpAsTheRegisterFile) {
  std::vector<uint64_t> words(40);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 0x1111111100000000 * (i + 1) + i;
  for (const Arch arch : {Arch::kX86_64, Arch::kI386, Arch::kAarch64, Arch::kUnknown}) {
    for (const uint64_t mask :
         {UnwindRegsMask(Arch::kX86_64), LeafRegsMask(Arch::kX86_64),
          UnwindRegsMask(Arch::kAarch64), LeafRegsMask(Arch::kAarch64), uint64_t{0xff0fff},
          uint64_t{1} << 7, uint64_t{1} << 8, uint64_t{0x180}}) {
      for (const size_t count : {static_cast<size_t>(std::popcount(mask)), size_t{3}}) {
        const U64List values = ListOf(std::vector<uint64_t>(words.begin(), words.begin() + count));
        const auto file = ToDwarfRegisters(arch, mask, values);
        const auto both = UserPcAndSp(arch, mask, values);
        ASSERT_EQ(both.has_value(), file.has_value()) << static_cast<int>(arch) << " " << mask;
        if (!file) continue;
        EXPECT_EQ(both->pc, file->pc);
        EXPECT_EQ(both->sp, file->sp);
      }
    }
  }
}

}  // namespace
}  // namespace sample
