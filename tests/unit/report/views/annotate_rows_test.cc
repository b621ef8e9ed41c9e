// DecodeInPieces (annotate_rows.h): code decoded a piece at a time gives
// exactly the instructions Decode gives of the whole, whatever the bytes
// (instructions across a piece's end, (bad) bytes, a truncated last one).
#include "report/views/annotate_rows.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace sample::report {
namespace {

struct Decoded {
  uint64_t address;
  uint32_t size;
  std::string text;
  bool operator==(const Decoded&) const = default;
};

TEST(DecodeInPiecesTest, PiecesDecodeAsTheWholeDoes) {
  auto disassembler = Disassembler::Open(CodeArch::kX86_64, AsmSyntax::kAtt);
  ASSERT_TRUE(disassembler.has_value()) << disassembler.error().message;
  std::mt19937 random(56);
  // Random bytes (every length of instruction, (bad) ones, prefixes), and
  // a run of 15-byte nops whose boundaries fall across the pieces' ends.
  std::vector<std::byte> code(3 * kPieceBytes + 1234);
  for (std::byte& b : code) b = static_cast<std::byte>(random());
  const uint8_t long_nop[15] = {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f,
                                0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00};
  for (size_t at = kPieceBytes - 200; at + 15 < kPieceBytes + 200; at += 15) {
    for (size_t i = 0; i < 15; ++i) code[at + i] = static_cast<std::byte>(long_nop[i]);
  }
  code.back() = std::byte{0x48};  // a REX prefix with nothing after it
  const uint64_t start = 0x400000;
  std::vector<Decoded> whole;
  for (const Instruction& in : disassembler->Decode(code, start)) {
    whole.push_back({in.address, in.size, in.mnemonic + " " + in.operands});
  }
  std::vector<Decoded> pieces;
  DecodeInPieces(*disassembler, code, start, [&](const Instruction& in) {
    pieces.push_back({in.address, in.size, in.mnemonic + " " + in.operands});
    return true;
  });
  ASSERT_GT(whole.size(), 3 * kPieceBytes / 8);
  EXPECT_EQ(pieces, whole);

  // Stopping: no instruction after the callback says no.
  size_t seen = 0;
  DecodeInPieces(*disassembler, code, start, [&](const Instruction&) { return ++seen < 10; });
  EXPECT_EQ(seen, 10u);
}

}  // namespace
}  // namespace sample::report
