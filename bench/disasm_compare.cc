// disasm_compare: prints the Disassembler's view of a raw code file, one
// line per instruction ("ADDRESS<TAB>SIZE<TAB>MNEMONIC OPERANDS", address
// in hex), for bench/disasm_compare.sh to set beside objdump's; the decode
// time goes to stderr.
//
//   disasm_compare CODE_FILE LOAD_ADDRESS_HEX [intel] [i386]
//
// Run by hand (bench/RESULTS.md); never a timed test.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "libsample/disasm/disassembler.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CODE_FILE LOAD_ADDRESS_HEX [intel] [i386]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<char> code((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
  const uint64_t address = std::strtoull(argv[2], nullptr, 16);
  bool intel = false;
  bool i386 = false;
  for (int i = 3; i < argc; ++i) {
    intel |= std::string(argv[i]) == "intel";
    i386 |= std::string(argv[i]) == "i386";
  }
  sample::Result<sample::Disassembler> disassembler =
      sample::Disassembler::Open(i386 ? sample::CodeArch::kI386 : sample::CodeArch::kX86_64,
                                 intel ? sample::AsmSyntax::kIntel : sample::AsmSyntax::kAtt);
  if (!disassembler) {
    std::fprintf(stderr, "%s\n", disassembler.error().message.c_str());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<sample::Instruction> instructions = disassembler->Decode(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(code.data()), code.size()),
      address);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const sample::Instruction& instruction : instructions) {
    std::printf("%llx\t%u\t%s%s%s\n", static_cast<unsigned long long>(instruction.address),
                instruction.size, instruction.mnemonic.c_str(),
                instruction.operands.empty() ? "" : " ", instruction.operands.c_str());
  }
  std::fprintf(stderr, "decoded %zu bytes, %zu instructions in %.1f ms\n", code.size(),
               instructions.size(), ms);
  return 0;
}
