// EndsAfterCall: each call encoding ends where its return address is, other
// instructions (and a call that ends a byte off) do not.
#include "libsample/symbols/call_sites.h"

#include <dlfcn.h>
#include <elf.h>

#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/disasm/disassembler.h"
#include "libsample/mapped_file.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample {
namespace {

// `code` with filler before it, as the bytes before a return address.
bool AfterCall(std::vector<uint8_t> code, uint16_t machine = EM_X86_64) {
  std::vector<uint8_t> bytes = {0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
  bytes.insert(bytes.end(), code.begin(), code.end());
  return EndsAfterCall(std::as_bytes(std::span(bytes)), machine);
}

TEST(CallSitesTest, X86CallsOfEveryLength) {
  EXPECT_TRUE(AfterCall({0xe8, 0x10, 0x20, 0x30, 0x40}));        // call rel32
  EXPECT_TRUE(AfterCall({0xff, 0xd0}));                          // call *%rax
  EXPECT_TRUE(AfterCall({0x41, 0xff, 0xd3}));                    // call *%r11
  EXPECT_TRUE(AfterCall({0xff, 0x10}));                          // call *(%rax)
  EXPECT_TRUE(AfterCall({0xff, 0x50, 0x08}));                    // call *0x8(%rax)
  EXPECT_TRUE(AfterCall({0xff, 0x54, 0x24, 0x08}));              // call *0x8(%rsp)
  EXPECT_TRUE(AfterCall({0xff, 0x14, 0x24}));                    // call *(%rsp)
  EXPECT_TRUE(AfterCall({0xff, 0x15, 0x00, 0x10, 0x00, 0x00}));  // call *0x1000(%rip)
  EXPECT_TRUE(AfterCall({0xff, 0x90, 0x00, 0x01, 0x00, 0x00}));  // call *0x100(%rax)
  EXPECT_TRUE(AfterCall({0xff, 0x14, 0xc5, 0, 0x10, 0, 0}));     // call *0x1000(,%rax,8)
  EXPECT_TRUE(AfterCall({0xff, 0x94, 0x24, 0, 1, 0, 0}));        // call *0x100(%rsp)
  EXPECT_TRUE(AfterCall({0x3e, 0xff, 0xd0}));                    // notrack call *%rax
  EXPECT_TRUE(AfterCall({0xff, 0x18}));                          // lcall *(%rax)
  EXPECT_TRUE(AfterCall({0xe8, 1, 2, 3, 4}, EM_386));
  EXPECT_TRUE(AfterCall({0xff, 0x55, 0x08}, EM_386));  // call *0x8(%ebp)
}

TEST(CallSitesTest, X86OtherInstructionsAreNoCall) {
  EXPECT_FALSE(AfterCall({0x48, 0x89, 0xc7}));  // mov %rax,%rdi
  EXPECT_FALSE(AfterCall({0xc3}));              // ret
  EXPECT_FALSE(AfterCall({0x90}));              // nop (Go's goexit + 1 follows one)
  EXPECT_FALSE(AfterCall({0xff, 0xe0}));        // jmp *%rax
  EXPECT_FALSE(AfterCall({0xff, 0x20}));        // jmp *(%rax)
  EXPECT_FALSE(AfterCall({0xff, 0xc0}));        // inc %eax
  EXPECT_FALSE(AfterCall({0xff, 0xd8}));        // lcall with a register: none
  // A call that ends a byte before or after the address.
  EXPECT_FALSE(AfterCall({0xe8, 1, 2, 3, 4, 0x90}));
  EXPECT_FALSE(AfterCall({0xe8, 1, 2, 3}));
  EXPECT_FALSE(AfterCall({0xff, 0x50, 0x08, 0x00}));
  EXPECT_FALSE(AfterCall({0xff, 0x15, 0x00, 0x10, 0x00}));
}

TEST(CallSitesTest, FewBytesBeforeTheAddress) {
  EXPECT_FALSE(EndsAfterCall({}, EM_X86_64));
  const std::vector<uint8_t> call = {0xff, 0xd0};
  EXPECT_TRUE(EndsAfterCall(std::as_bytes(std::span(call)), EM_X86_64));
  EXPECT_FALSE(EndsAfterCall(std::as_bytes(std::span(call).subspan(1)), EM_X86_64));
  // Only the last 8 bytes are looked at.
  std::vector<uint8_t> far(20, 0x90);
  far[0] = 0xe8;
  EXPECT_FALSE(EndsAfterCall(std::as_bytes(std::span(far)), EM_X86_64));
}

TEST(CallSitesTest, Aarch64BranchesWithLink) {
  EXPECT_TRUE(AfterCall({0x00, 0x01, 0x00, 0x94}, EM_AARCH64));  // bl
  EXPECT_TRUE(AfterCall({0x00, 0x02, 0x3f, 0xd6}, EM_AARCH64));  // blr x16
  EXPECT_TRUE(AfterCall({0x1f, 0x0a, 0x3f, 0xd6}, EM_AARCH64));  // blraaz x16
  EXPECT_TRUE(AfterCall({0x11, 0x0a, 0x3f, 0xd7}, EM_AARCH64));  // blraa x16, x17
  EXPECT_FALSE(AfterCall({0x00, 0x02, 0x1f, 0xd6}, EM_AARCH64));  // br x16
  EXPECT_FALSE(AfterCall({0x00, 0x01, 0x00, 0x14}, EM_AARCH64));  // b
  EXPECT_FALSE(AfterCall({0xc0, 0x03, 0x5f, 0xd6}, EM_AARCH64));  // ret
}

// Against Capstone over all of this process's libc code: every call's end
// passes, and few other instructions' ends do (the point of the test: the
// words a stack scan finds mostly point at those).
TEST(CallSitesTest, EveryCallOfLibcAndFewOthers) {
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&qsort), &info), 0);
  auto symbols = ElfSymbols::Load(info.dli_fname);
  ASSERT_TRUE(symbols) << symbols.error().message;
  auto file = MappedFile::Open(info.dli_fname);
  ASSERT_TRUE(file) << file.error().message;
  auto disassembler = Disassembler::Open(CodeArch::kX86_64, AsmSyntax::kAtt);
  ASSERT_TRUE(disassembler) << disassembler.error().message;
  size_t calls = 0, others = 0, others_passing = 0;
  for (const auto& segment : symbols->segments()) {
    if (!segment.executable) continue;
    const auto code = file->bytes().subspan(segment.offset, segment.filesz);
    for (const Instruction& insn : disassembler->Decode(code, segment.offset)) {
      const uint64_t end = insn.address + insn.size;
      const bool passes = EndsAfterCall(file->bytes().first(end), EM_X86_64);
      if (insn.flow == Instruction::Flow::kCall || insn.flow == Instruction::Flow::kIndirectCall) {
        ++calls;
        ASSERT_TRUE(passes) << insn.mnemonic << " " << insn.operands << " at " << insn.address;
      } else {
        ++others;
        others_passing += passes;
      }
    }
  }
  EXPECT_GT(calls, 5000u);
  EXPECT_LT(others_passing * 50, others) << others_passing << " of " << others;
}

TEST(CallSitesTest, SigreturnTrampolines) {
  const auto starts = [](std::vector<uint8_t> code, uint16_t machine) {
    return StartsSigreturn(std::as_bytes(std::span(code)), machine);
  };
  EXPECT_TRUE(starts({0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05, 0x90}, EM_X86_64));
  EXPECT_FALSE(starts({0x48, 0xc7, 0xc0, 0x0e, 0, 0, 0, 0x0f, 0x05}, EM_X86_64));  // another call
  EXPECT_FALSE(starts({0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f}, EM_X86_64));        // cut short
  EXPECT_TRUE(starts({0xb8, 0xad, 0, 0, 0, 0xcd, 0x80}, EM_386));
  EXPECT_TRUE(starts({0x58, 0xb8, 0x77, 0, 0, 0, 0xcd, 0x80}, EM_386));
  EXPECT_TRUE(starts({0x68, 0x11, 0x80, 0xd2, 0x01, 0, 0, 0xd4}, EM_AARCH64));
  EXPECT_FALSE(starts({0x68, 0x11, 0x80, 0xd2, 0x01, 0, 0, 0xd4}, EM_RISCV));
  // This process's libc has one (__restore_rt), whatever its symbols say.
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&qsort), &info), 0);
  auto file = MappedFile::Open(info.dli_fname);
  ASSERT_TRUE(file) << file.error().message;
  size_t found = 0;
  for (size_t at = 0; at < file->bytes().size(); ++at) {
    found += StartsSigreturn(file->bytes().subspan(at), EM_X86_64);
  }
  EXPECT_GE(found, 1u);
}

TEST(CallSitesTest, OtherMachinesKeepEveryWord) {
  EXPECT_TRUE(AfterCall({0x00, 0x00, 0x00, 0x00}, EM_RISCV));
}

}  // namespace
}  // namespace sample
