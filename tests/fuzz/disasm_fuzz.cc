// Fuzz target: machine code, which the annotate view disassembles from
// binaries and recordings it did not write. Checks, beyond not crashing,
// the promises of Disassembler::Decode: instructions in order, each where
// the previous ended, 1 to 15 bytes, together covering every byte; (bad)
// ones with no operands and no flow; a target only on direct branches.
// And that the annotate view's decoding in pieces (DecodeInPieces,
// report/views/annotate_rows.h) gives exactly those instructions, with
// pieces small enough for the fuzzer's inputs to cross their ends.
// Input: u8 flags (bit 0: i386, bit 1: Intel syntax, bits 2-7: the piece
// size, 16 + 4 x that), u64 load address, then the code.
#include <cstdlib>
#include <vector>

#include "libsample/disasm/disassembler.h"
#include "report/views/annotate_rows.h"
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
  size_t at = 0;
  report::DecodeInPieces(
      *disassembler, code, address,
      [&](const Instruction& in) {
        if (at >= instructions.size()) std::abort();
        const Instruction& whole = instructions[at++];
        if (in.address != whole.address || in.size != whole.size || in.mnemonic != whole.mnemonic ||
            in.operands != whole.operands || in.target != whole.target) {
          std::abort();
        }
        return true;
      },
      16 + 4 * size_t{static_cast<uint8_t>(flags >> 2)});
  if (at != instructions.size()) std::abort();
  return 0;
}
