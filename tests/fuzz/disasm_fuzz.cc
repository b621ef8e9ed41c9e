// Fuzz target: machine code, which the annotate view disassembles from
// binaries and recordings it did not write. Checks, beyond not crashing,
// the promises of Disassembler::Decode: instructions in order, each where
// the previous ended, 1 to 15 bytes, together covering every byte; (bad)
// ones with no operands and no flow; a target only on direct branches.
// Input: u8 flags (bit 0: i386, bit 1: Intel syntax), u64 load address,
// then the code.
#include <cstdlib>
#include <vector>

#include "libsample/disasm/disassembler.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(disasm)(std::span<const std::byte> input) {
  using namespace sample;
  using Flow = Instruction::Flow;
  fuzz::InputTaker taker(input);
  const auto flags = taker.Take<uint8_t>();
  const auto address = taker.Take<uint64_t>();
  const CodeArch arch = (flags & 1) != 0 ? CodeArch::kI386 : CodeArch::kX86_64;
  const AsmSyntax syntax = (flags & 2) != 0 ? AsmSyntax::kIntel : AsmSyntax::kAtt;
  Result<Disassembler> disassembler = Disassembler::Open(arch, syntax);
  if (!disassembler) std::abort();
  const std::span<const std::byte> code = taker.rest();
  const std::vector<Instruction> instructions = disassembler->Decode(code, address);
  uint64_t next = address;
  for (const Instruction& instruction : instructions) {
    if (instruction.address != next || instruction.size < 1 || instruction.size > 15) std::abort();
    next += instruction.size;
    if (instruction.mnemonic.empty()) std::abort();
    if (instruction.bad && (instruction.mnemonic != "(bad)" || !instruction.operands.empty() ||
                            instruction.flow != Flow::kNone || instruction.target)) {
      std::abort();
    }
    const bool direct = instruction.flow == Flow::kJump ||
                        instruction.flow == Flow::kConditionalJump ||
                        instruction.flow == Flow::kCall;
    if (direct != instruction.target.has_value()) std::abort();
  }
  if (next != address + code.size()) std::abort();
  return 0;
}
