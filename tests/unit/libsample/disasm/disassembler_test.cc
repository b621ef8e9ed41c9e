#include "libsample/disasm/disassembler.h"

#include <capstone/capstone.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace sample {
namespace {

using Flow = Instruction::Flow;

std::vector<std::byte> Bytes(std::initializer_list<uint8_t> values) {
  std::vector<std::byte> bytes;
  for (const uint8_t value : values) bytes.push_back(static_cast<std::byte>(value));
  return bytes;
}

Disassembler Open(CodeArch arch = CodeArch::kX86_64, AsmSyntax syntax = AsmSyntax::kAtt) {
  Result<Disassembler> disassembler = Disassembler::Open(arch, syntax);
  EXPECT_TRUE(disassembler) << disassembler.error().message;
  return std::move(*disassembler);
}

// "mnemonic operands", as objdump -d --no-show-raw-insn prints a line.
std::string Text(const Instruction& instruction) {
  return instruction.operands.empty() ? instruction.mnemonic
                                      : instruction.mnemonic + " " + instruction.operands;
}

std::vector<std::string> Texts(const std::vector<Instruction>& instructions) {
  std::vector<std::string> texts;
  for (const Instruction& instruction : instructions) texts.push_back(Text(instruction));
  return texts;
}

// The Decode contract: instructions in order, each starting where the
// previous ended, together covering the span exactly.
void ExpectCovers(const std::vector<Instruction>& instructions, uint64_t address, size_t size) {
  uint64_t next = address;
  for (const Instruction& instruction : instructions) {
    ASSERT_EQ(instruction.address, next);
    ASSERT_GE(instruction.size, 1u);
    ASSERT_LE(instruction.size, 15u);
    next += instruction.size;
  }
  EXPECT_EQ(next, address + size);
}

// A frame-pointer function: a prologue, a compare and conditional jump
// over a call to itself, an epilogue. Texts as objdump 2.40 prints them.
TEST(DisassemblerTest, FunctionWithPrologueBranchesAndCall) {
  const std::vector<std::byte> code = Bytes({
      0x55,                          // 1000 push %rbp
      0x48, 0x89, 0xe5,              // 1001 mov %rsp,%rbp
      0x48, 0x83, 0xec, 0x10,        // 1004 sub $0x10,%rsp
      0x89, 0x7d, 0xfc,              // 1008 mov %edi,-0x4(%rbp)
      0x83, 0x7d, 0xfc, 0x00,        // 100b cmpl $0x0,-0x4(%rbp)
      0x75, 0x07,                    // 100f jne 1018
      0xb8, 0x00, 0x00, 0x00, 0x00,  // 1011 mov $0x0,%eax
      0xeb, 0x0a,                    // 1016 jmp 1022
      0x8b, 0x45, 0xfc,              // 1018 mov -0x4(%rbp),%eax
      0x89, 0xc7,                    // 101b mov %eax,%edi
      0xe8, 0xde, 0xff, 0xff, 0xff,  // 101d call 1000
      0xc9,                          // 1022 leave
      0xc3,                          // 1023 ret
  });
  const std::vector<Instruction> instructions = Open().Decode(code, 0x1000);
  ExpectCovers(instructions, 0x1000, code.size());
  EXPECT_EQ(Texts(instructions),
            (std::vector<std::string>{"push %rbp", "mov %rsp,%rbp", "sub $0x10,%rsp",
                                      "mov %edi,-0x4(%rbp)", "cmpl $0x0,-0x4(%rbp)", "jne 1018",
                                      "mov $0x0,%eax", "jmp 1022", "mov -0x4(%rbp),%eax",
                                      "mov %eax,%edi", "call 1000", "leave", "ret"}));
  ASSERT_EQ(instructions.size(), 13u);
  EXPECT_EQ(instructions[0].flow, Flow::kNone);
  EXPECT_FALSE(instructions[0].target);
  EXPECT_EQ(instructions[5].flow, Flow::kConditionalJump);
  EXPECT_EQ(instructions[5].target, 0x1018u);
  EXPECT_EQ(instructions[7].flow, Flow::kJump);
  EXPECT_EQ(instructions[7].target, 0x1022u);
  EXPECT_EQ(instructions[10].flow, Flow::kCall);
  EXPECT_EQ(instructions[10].target, 0x1000u);
  EXPECT_EQ(instructions[10].size, 5u);
  EXPECT_EQ(instructions[12].flow, Flow::kReturn);
  for (const Instruction& instruction : instructions) EXPECT_FALSE(instruction.bad);
}

// A switch's jump table: the jumps go through a register or memory, so
// they have no target; so do calls through a pointer.
TEST(DisassemblerTest, IndirectJumpsAndCallsHaveNoTarget) {
  const std::vector<std::byte> code = Bytes({
      0x48, 0x8d, 0x05, 0xf0, 0x0f, 0x00, 0x00,  // lea 0xff0(%rip),%rax
      0x48, 0x63, 0x04, 0xb8,                    // movslq (%rax,%rdi,4),%rax
      0xff, 0xe0,                                // jmp *%rax
      0x3e, 0xff, 0xe0,                          // notrack jmp *%rax
      0xff, 0x24, 0xc5, 0x00, 0x20, 0x00, 0x00,  // jmp *0x2000(,%rax,8)
      0xff, 0x15, 0x00, 0x10, 0x00, 0x00,        // call *0x1000(%rip)
      0xff, 0xd0,                                // call *%rax
  });
  const std::vector<Instruction> instructions = Open().Decode(code, 0x2000);
  ExpectCovers(instructions, 0x2000, code.size());
  EXPECT_EQ(Texts(instructions),
            (std::vector<std::string>{"lea 0xff0(%rip),%rax", "movslq (%rax,%rdi,4),%rax",
                                      "jmp *%rax", "notrack jmp *%rax", "jmp *0x2000(,%rax,8)",
                                      "call *0x1000(%rip)", "call *%rax"}));
  ASSERT_EQ(instructions.size(), 7u);
  for (size_t i = 2; i <= 4; ++i) {
    EXPECT_EQ(instructions[i].flow, Flow::kIndirectJump) << i;
    EXPECT_FALSE(instructions[i].target) << i;
  }
  for (size_t i = 5; i <= 6; ++i) {
    EXPECT_EQ(instructions[i].flow, Flow::kIndirectCall) << i;
    EXPECT_FALSE(instructions[i].target) << i;
  }
}

// Other direct branches: jrcxz, loop and xbegin go on or jump; a bnd jmp
// is a plain jump; syscall leaves no flow the view draws.
TEST(DisassemblerTest, OtherBranchesAndTheirTargets) {
  const std::vector<std::byte> code = Bytes({
      0xe3, 0x04,                          // 100 jrcxz 106
      0xe2, 0xfc,                          // 102 loop 100
      0xf2, 0xe9, 0x00, 0x01, 0x00, 0x00,  // 104 bnd jmp 20a
      0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00,  // 10a xbegin 120
      0x0f, 0x05,                          // 110 syscall
      0xf3, 0xc3,                          // 112 repz ret
      0x0f, 0x84, 0x00, 0xff, 0xff, 0xff,  // 114 je 1a (wraps below 0x100)
  });
  const std::vector<Instruction> instructions = Open().Decode(code, 0x100);
  ExpectCovers(instructions, 0x100, code.size());
  EXPECT_EQ(Texts(instructions),
            (std::vector<std::string>{"jrcxz 106", "loop 100", "bnd jmp 20a", "xbegin 120",
                                      "syscall", "repz ret", "je 1a"}));
  ASSERT_EQ(instructions.size(), 7u);
  EXPECT_EQ(instructions[0].flow, Flow::kConditionalJump);
  EXPECT_EQ(instructions[1].flow, Flow::kConditionalJump);
  EXPECT_EQ(instructions[1].target, 0x100u);
  EXPECT_EQ(instructions[2].flow, Flow::kJump);
  EXPECT_EQ(instructions[2].target, 0x20au);
  EXPECT_EQ(instructions[3].flow, Flow::kConditionalJump);
  EXPECT_EQ(instructions[4].flow, Flow::kNone);
  EXPECT_EQ(instructions[5].flow, Flow::kReturn);
  EXPECT_EQ(instructions[6].target, 0x1au);
}

// What compilers put between functions: multi-byte nops (with the
// prefixes objdump names), int3, and zero bytes.
TEST(DisassemblerTest, PaddingDecodes) {
  const std::vector<std::byte> code = Bytes({
      0xc3,                                                              // ret
      0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,        // cs nopw
      0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,  // data16 cs nopw
      0x0f, 0x1f, 0x40, 0x00,                                            // nopl 0x0(%rax)
      0x0f, 0x1f, 0x44, 0x00, 0x00,                                      // nopl 0x0(%rax,%rax,1)
      0x0f, 0x1f, 0x00,                                                  // nopl (%rax)
      0x66, 0x90,                                                        // xchg %ax,%ax
      0x90,                                                              // nop
      0xcc, 0xcc,                                                        // int3
      0x48, 0x8d, 0x74, 0x26, 0x00,  // lea 0x0(%rsi,%riz,1),%rsi
      0x00, 0x00,                    // add %al,(%rax)
  });
  const std::vector<Instruction> instructions = Open().Decode(code, 0x3000);
  ExpectCovers(instructions, 0x3000, code.size());
  EXPECT_EQ(Texts(instructions),
            (std::vector<std::string>{
                "ret", "cs nopw 0x0(%rax,%rax,1)", "data16 cs nopw 0x0(%rax,%rax,1)",
                "nopl 0x0(%rax)", "nopl 0x0(%rax,%rax,1)", "nopl (%rax)", "xchg %ax,%ax", "nop",
                "int3", "int3", "lea 0x0(%rsi,%riz,1),%rsi", "add %al,(%rax)"}));
  for (const Instruction& instruction : instructions) EXPECT_FALSE(instruction.bad);
}

// Bytes that are no instruction in 64-bit code (push %es, daa, pusha, aam
// ...): one (bad) byte each, and decoding goes on right after.
TEST(DisassemblerTest, UndecodableBytesAreBadOneByteEach) {
  const std::vector<std::byte> code =
      Bytes({0x90, 0x06, 0x0e, 0x1e, 0x27, 0x60, 0xd4, 0x0a, 0x90, 0xc3});
  const std::vector<Instruction> instructions = Open().Decode(code, 0x4000);
  ExpectCovers(instructions, 0x4000, code.size());
  ASSERT_EQ(instructions.size(), 10u);
  EXPECT_EQ(Text(instructions[0]), "nop");
  for (size_t i = 1; i <= 7; ++i) {
    EXPECT_TRUE(instructions[i].bad) << i;
    EXPECT_EQ(instructions[i].mnemonic, "(bad)") << i;
    EXPECT_EQ(instructions[i].operands, "") << i;
    EXPECT_EQ(instructions[i].size, 1u) << i;
    EXPECT_EQ(instructions[i].flow, Flow::kNone) << i;
  }
  EXPECT_EQ(Text(instructions[8]), "nop");
  EXPECT_EQ(instructions[8].address, 0x4008u);
  EXPECT_EQ(Text(instructions[9]), "ret");
}

// The span ends inside an instruction: its bytes are (bad), one each.
TEST(DisassemblerTest, TruncatedLastInstructionBecomesBadBytes) {
  const std::vector<std::byte> code = Bytes({0x31, 0xc0, 0x48, 0x8b, 0x05});
  const std::vector<Instruction> instructions = Open().Decode(code, 0x5000);
  ExpectCovers(instructions, 0x5000, code.size());
  ASSERT_EQ(instructions.size(), 4u);
  EXPECT_EQ(Text(instructions[0]), "xor %eax,%eax");
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_TRUE(instructions[i].bad) << i;
    EXPECT_EQ(instructions[i].size, 1u) << i;
  }
  // A call cut short has no target (ff ff is no instruction either).
  const std::vector<Instruction> call = Open().Decode(Bytes({0xe8, 0xff, 0xff}), 0);
  ExpectCovers(call, 0, 3);
  for (const Instruction& instruction : call) {
    EXPECT_TRUE(instruction.bad);
    EXPECT_FALSE(instruction.target);
  }
}

// AVX-512 mask instructions Capstone 4 does not know (glibc's *-evex
// string functions), and rdpkru: one (bad) the length of the whole
// instruction, so the next one starts where objdump's does.
TEST(DisassemblerTest, UnknownVexEvexInstructionsKeepInStep) {
  const std::vector<std::byte> code = Bytes({
      0xc5, 0xfb, 0x93, 0xc0,                                // kmovd %k0,%eax
      0xc4, 0xe1, 0xfb, 0x92, 0xcb,                          // kmovq %rbx,%k1
      0x62, 0xf3, 0x7d, 0x40, 0x3f, 0x40, 0x3f, 0x00,        // vpcmpeqb 0xfc0(%rax),%zmm16,%k0
      0x62, 0xe3, 0x75, 0x20, 0x25, 0x54, 0x17, 0xff, 0xde,  // vpternlogd $0xde,-0x20(...)
      0x0f, 0x01, 0xee,                                      // rdpkru
      0x48, 0x89, 0xc7,                                      // mov %rax,%rdi
  });
  const std::vector<Instruction> instructions = Open().Decode(code, 0x6000);
  ExpectCovers(instructions, 0x6000, code.size());
  ASSERT_EQ(instructions.size(), 6u);
  const uint32_t sizes[] = {4, 5, 8, 9, 3};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(instructions[i].bad) << i;
    EXPECT_EQ(instructions[i].mnemonic, "(bad)") << i;
    EXPECT_EQ(instructions[i].size, sizes[i]) << i;
  }
  EXPECT_EQ(Text(instructions[5]), "mov %rax,%rdi");
  EXPECT_EQ(instructions[5].address, 0x6000u + 29);
}

// Where Capstone's AT&T text differs from objdump's, the rewriting that
// makes it the same.
TEST(DisassemblerTest, AttTextAsObjdumpPrintsIt) {
  const Disassembler disassembler = Open();
  const auto text = [&](std::initializer_list<uint8_t> bytes) {
    const std::vector<Instruction> instructions = disassembler.Decode(Bytes(bytes), 0x1000);
    EXPECT_EQ(instructions.size(), 1u);
    return instructions.empty() ? std::string() : Text(instructions[0]);
  };
  EXPECT_EQ(text({0x48, 0x83, 0xc4, 0x80}), "add $0xffffffffffffff80,%rsp");
  EXPECT_EQ(text({0x66, 0x83, 0xf8, 0xff}), "cmp $0xffff,%ax");
  EXPECT_EQ(text({0x6a, 0xff}), "push $0xffffffffffffffff");
  EXPECT_EQ(text({0x48, 0xc7, 0x04, 0x24, 0x20, 0x00, 0x00, 0x00}), "movq $0x20,(%rsp)");
  EXPECT_EQ(text({0x48, 0x8b, 0x44, 0x24, 0x08}), "mov 0x8(%rsp),%rax");
  EXPECT_EQ(text({0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00}), "mov %fs:0x28,%rax");
  EXPECT_EQ(text({0xf0, 0x0f, 0xb1, 0x17}), "lock cmpxchg %edx,(%rdi)");
  EXPECT_EQ(text({0xf3, 0x48, 0xab}), "rep stos %rax,%es:(%rdi)");
  EXPECT_EQ(text({0xa4}), "movsb %ds:(%rsi),%es:(%rdi)");
  EXPECT_EQ(text({0xd1, 0xe8}), "shr %eax");
  EXPECT_EQ(text({0xd3, 0x20}), "shll %cl,(%rax)");
  EXPECT_EQ(text({0xd3, 0xe0}), "shl %cl,%eax");
  EXPECT_EQ(text({0x66, 0x48, 0x0f, 0x6e, 0xc0}), "movq %rax,%xmm0");
  EXPECT_EQ(text({0x0f, 0xb6, 0x04, 0x07}), "movzbl (%rdi,%rax,1),%eax");
  EXPECT_EQ(text({0x48, 0xb8, 0xf8, 0xbf, 0xff, 0xff, 0xff, 0xff, 0xf7, 0xff}),
            "movabs $0xfff7ffffffffbff8,%rax");
  EXPECT_EQ(text({0x91}), "xchg %eax,%ecx");
  EXPECT_EQ(text({0xdc, 0xc9}), "fmul %st,%st(1)");
  EXPECT_EQ(text({0xd8, 0xc1}), "fadd %st(1),%st");
  EXPECT_EQ(text({0xde, 0xc9}), "fmulp %st,%st(1)");
  EXPECT_EQ(text({0xdf, 0xe9}), "fucomip %st(1),%st");
  EXPECT_EQ(text({0xdd, 0xd8}), "fstp %st(0)");
  EXPECT_EQ(text({0x66, 0x48, 0x8d, 0x3d, 0x80, 0xbf, 0x16, 0x00}),
            "data16 lea 0x16bf80(%rip),%rdi");
  EXPECT_EQ(text({0x66, 0x66, 0x48, 0xe8, 0x00, 0x00, 0x00, 0x00}),
            "data16 data16 rex.W call 1008");
  EXPECT_EQ(text({0x62, 0xf1, 0x7d, 0xc9, 0xfe, 0x0c, 0x24}), "vpaddd (%rsp),%zmm0,%zmm1{%k1}{z}");
  // Capstone 4 names this EVEX index %xmm0.
  EXPECT_EQ(text({0x62, 0xb1, 0x75, 0x20, 0x76, 0x4c, 0x06, 0xff}),
            "vpcmpeqd -0x20(%rsi,%r8,1),%ymm17,%k1");
}

TEST(DisassemblerTest, I386Code) {
  const std::vector<std::byte> code = Bytes({
      0x55,                                      // 8000 push %ebp
      0x89, 0xe5,                                // 8001 mov %esp,%ebp
      0x83, 0xec, 0x08,                          // 8003 sub $0x8,%esp
      0x8b, 0x45, 0x08,                          // 8006 mov 0x8(%ebp),%eax
      0x89, 0x04, 0x24,                          // 8009 mov %eax,(%esp)
      0xe8, 0xef, 0xff, 0xff, 0xff,              // 800c call 8000
      0xff, 0x24, 0x85, 0x00, 0x30, 0x00, 0x00,  // 8011 jmp *0x3000(,%eax,4)
      0x8d, 0x74, 0x26, 0x00,                    // 8018 lea 0x0(%esi,%eiz,1),%esi
      0xc9,                                      // 801c leave
      0xc3,                                      // 801d ret
  });
  const std::vector<Instruction> instructions = Open(CodeArch::kI386).Decode(code, 0x8000);
  ExpectCovers(instructions, 0x8000, code.size());
  EXPECT_EQ(
      Texts(instructions),
      (std::vector<std::string>{"push %ebp", "mov %esp,%ebp", "sub $0x8,%esp", "mov 0x8(%ebp),%eax",
                                "mov %eax,(%esp)", "call 8000", "jmp *0x3000(,%eax,4)",
                                "lea 0x0(%esi,%eiz,1),%esi", "leave", "ret"}));
  ASSERT_EQ(instructions.size(), 10u);
  EXPECT_EQ(instructions[5].flow, Flow::kCall);
  EXPECT_EQ(instructions[5].target, 0x8000u);
  EXPECT_EQ(instructions[6].flow, Flow::kIndirectJump);
  // In 32-bit code a target wraps at 4 GiB; in 64-bit code it does not.
  const std::vector<std::byte> call_down = Bytes({0xe8, 0x00, 0xff, 0xff, 0xff});
  const std::vector<Instruction> i386 = Open(CodeArch::kI386).Decode(call_down, 0x10);
  ASSERT_EQ(i386.size(), 1u);
  EXPECT_EQ(i386[0].target, 0xffffff15u);
  EXPECT_EQ(Text(i386[0]), "call ffffff15");
  const std::vector<Instruction> x86_64 = Open().Decode(call_down, 0x10);
  ASSERT_EQ(x86_64.size(), 1u);
  EXPECT_EQ(x86_64[0].target, 0xffffffffffffff15u);
  // C4 and C5 are LES and LDS in 32-bit code when a memory operand follows.
  const std::vector<Instruction> les = Open(CodeArch::kI386).Decode(Bytes({0xc4, 0x00}), 0);
  ASSERT_EQ(les.size(), 1u);
  EXPECT_EQ(Text(les[0]), "les (%eax),%eax");
}

TEST(DisassemblerTest, IntelSyntax) {
  const std::vector<std::byte> code = Bytes({
      0x55,                                                        // push rbp
      0x48, 0x89, 0xe5,                                            // mov rbp,rsp
      0x89, 0x7d, 0xfc,                                            // mov DWORD PTR [rbp-0x4],edi
      0x83, 0x7d, 0xfc, 0x00,                                      // cmp DWORD PTR [rbp-0x4],0x0
      0x75, 0x02,                                                  // jne 100f
      0x0f, 0x1f, 0x44, 0x00, 0x00,                                // nop DWORD PTR [rax+rax*1+0x0]
      0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00,        // mov rax,QWORD PTR fs:0x28
      0x48, 0x83, 0xc4, 0x80,                                      // add rsp,0xffffffffffffff80
      0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,  // cs nop WORD PTR ...
      0xf3, 0x48, 0xab,                                            // rep stos ...
      0xd1, 0xe8,                                                  // shr eax,1
      0xe8, 0xcd, 0xff, 0xff, 0xff,                                // call 1000
      0xc3,                                                        // ret
  });
  const std::vector<Instruction> instructions =
      Open(CodeArch::kX86_64, AsmSyntax::kIntel).Decode(code, 0x1000);
  ExpectCovers(instructions, 0x1000, code.size());
  EXPECT_EQ(
      Texts(instructions),
      (std::vector<std::string>{
          "push rbp", "mov rbp,rsp", "mov DWORD PTR [rbp-0x4],edi", "cmp DWORD PTR [rbp-0x4],0x0",
          "jne 100f", "nop DWORD PTR [rax+rax*1+0x0]", "mov rax,QWORD PTR fs:0x28",
          "add rsp,0xffffffffffffff80", "cs nop WORD PTR [rax+rax*1+0x0]",
          "rep stos QWORD PTR es:[rdi],rax", "shr eax,1", "call 1000", "ret"}));
  ASSERT_EQ(instructions.size(), 13u);
  EXPECT_EQ(instructions[4].target, 0x100fu);
  EXPECT_EQ(instructions[11].flow, Flow::kCall);
  EXPECT_EQ(instructions[11].target, 0x1000u);
}

TEST(DisassemblerTest, EmptyCodeGivesNoInstructions) {
  EXPECT_TRUE(Open().Decode({}, 0x1000).empty());
}

// The property the fuzz target checks, on a few fixed random inputs: any
// bytes decode, contiguously, covering every byte.
TEST(DisassemblerTest, RandomBytesAreCoveredExactly) {
  for (const CodeArch arch : {CodeArch::kX86_64, CodeArch::kI386}) {
    for (const AsmSyntax syntax : {AsmSyntax::kAtt, AsmSyntax::kIntel}) {
      const Disassembler disassembler = Open(arch, syntax);
      std::mt19937 random(7);
      for (int round = 0; round < 20; ++round) {
        std::vector<std::byte> code(1 + random() % 512);
        for (std::byte& byte : code) byte = static_cast<std::byte>(random() & 0xff);
        const uint64_t address = round == 0 ? ~uint64_t{0} - 100 : random();
        ExpectCovers(disassembler.Decode(code, address), address, code.size());
      }
    }
  }
}

TEST(DisassemblerTest, MovedDisassemblerStillDecodes) {
  Disassembler first = Open();
  Disassembler second = std::move(first);
  Disassembler third = Open(CodeArch::kI386);
  third = std::move(second);
  EXPECT_EQ(third.arch(), CodeArch::kX86_64);
  const std::vector<Instruction> instructions = third.Decode(Bytes({0xc3}), 0);
  ASSERT_EQ(instructions.size(), 1u);
  EXPECT_EQ(Text(instructions[0]), "ret");
}

}  // namespace
}  // namespace sample

// Capstone's other architectures are left out of the link
// (libsample/disasm/x86_only.cc): opening one fails, x86 still opens.
TEST(DisassemblerTest, CapstoneHoldsX86Alone) {
  for (int arch = 0; arch < CS_ARCH_MAX; ++arch) {
    if (arch == CS_ARCH_X86) continue;
    csh handle = 0;
    // CS_ERR_ARCH: not CS_ERR_MODE, which an architecture linked in gives
    // for a mode it does not take.
    EXPECT_EQ(cs_open(static_cast<cs_arch>(arch), CS_MODE_LITTLE_ENDIAN, &handle), CS_ERR_ARCH)
        << arch;
    if (handle != 0) cs_close(&handle);
  }
  csh handle = 0;
  ASSERT_EQ(cs_open(CS_ARCH_X86, CS_MODE_64, &handle), CS_ERR_OK);
  cs_close(&handle);
}
