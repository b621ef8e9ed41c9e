// objdump's spelling of an instruction, from Capstone's.
//
// perf annotate shows `objdump -d` (binutils 2.40 here), so the annotate
// view should read the same. Capstone's printers differ from objdump's in
// ways that are cheap to undo from the instruction's details: a space after
// commas, small numbers in decimal, size suffixes where a register already
// says the size ("movq %rdi, %rax"; "callq", "retq"), a zero displacement or
// scale 1 left out ("nopw (%rax, %rax)" for "nopw 0x0(%rax,%rax,1)"),
// negative immediates with a minus instead of their bits at the operand's
// size, redundant prefixes folded away ("nop" for "xchg %ax,%ax", "nopw
// %cs:" for "cs nopw"), implicit x87 and string operands. AttText and
// IntelText (att_text.cc, intel_text.cc) do it per syntax over the helpers
// declared here (objdump_style.cc). Internal to libsample/disasm/: it
// includes Capstone's header.
#pragma once

#include <capstone/capstone.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sample {

struct InstructionText {
  std::string mnemonic;
  std::string operands;
};

// `insn` decoded with details on in AT&T syntax; `target`: a direct
// branch's, whose operand becomes the bare hex address ("jne 11d8").
InstructionText AttText(csh handle, const cs_insn& insn, bool is_64bit,
                        std::optional<uint64_t> target);

// `insn` decoded with details on in Intel syntax.
InstructionText IntelText(const cs_insn& insn, bool is_64bit, std::optional<uint64_t> target);

// ---- Shared by both syntaxes ----

// Capstone's mnemonic may start with prefixes: "lock cmpxchgl", "rep stosb".
struct MnemonicParts {
  std::string_view prefixes;  // "lock ", or empty
  std::string word;           // "cmpxchgl"
};
MnemonicParts SplitMnemonic(std::string_view mnemonic);

std::string_view TrimSpaces(std::string_view text);
std::string WithoutSpaces(std::string_view text);
// Capstone's operand list split at the commas outside (), [] and {}.
std::vector<std::string_view> SplitOperands(std::string_view text);
// "-8" -> "-0x8", "16" -> "0x10": a displacement keeps its sign.
std::string FormatDisplacement(std::string_view text);
// "-0x80" at 8 bytes -> "0xffffffffffffff80": an immediate is its bits at
// the operand's size (`size` bytes; 0: as a 64-bit value).
std::string FormatImmediate(std::string_view text, unsigned size);
// The size of the instruction's first immediate operand, 0 if none.
unsigned ImmediateSize(const cs_insn& insn);

// What the encoding says of the memory operand that Capstone's text leaves out.
struct MemoryEncoding {
  bool zero_displacement = false;  // a displacement of 0 is encoded
  bool sib_without_index = false;  // a SIB byte whose index field says "none"
  bool sib_without_base = false;   // a SIB byte whose base field says "none"
  uint8_t sib_base = 0;            // its base field (4: rsp or r12)
  uint8_t sib_scale = 0;           // its scale field (log2)
  bool addr32 = false;             // 32-bit addressing: %eiz, not %riz

  // objdump shows such a SIB byte as index %riz, unless it only says "base
  // rsp/r12, scale 1", the one way to address from those.
  bool ShowsRiz() const { return sib_without_index && (sib_base != 4 || sib_scale != 0); }
};
MemoryEncoding ReadMemoryEncoding(const cs_insn& insn);

// The general register numbered `n` (0-15), 32- or 64-bit, without "%".
std::string GeneralRegister(unsigned n, bool wide);
// Capstone 4 names an EVEX instruction's index register as a vector
// register ("xmm0" for rax) unless the instruction is a gather or scatter
// (VSIB): the general register it means, or nullopt if it means none.
std::optional<std::string> EvexIndexRegister(std::string_view mnemonic, std::string_view reg,
                                             bool addr32);

bool IsShiftOrRotate(unsigned id);
// D0, D1: a shift or rotate by one, which objdump writes without a count
// in AT&T ("shr %eax") and with "1" in Intel ("shr eax,1").
bool IsShiftByOne(const cs_x86& x86);
// movs, cmps, stos, lods, scas, ins, outs: implicit segments on their
// memory operands (es: for (r/e)di, ds: for (r/e)si).
bool IsStringInstruction(const cs_insn& insn);
bool IsPortInstruction(unsigned id);
// call, jmp, ret, push, pop: their operand size defaults to the code's.
bool HasDefaultSize(unsigned id);

// x87 register forms: where objdump writes %st that Capstone leaves out.
enum class ImplicitSt { kNone, kDestination, kSource };
// For a one-operand x87 register form: whether %st is the destination
// (D8, DA, DB, DF forms: "fadd %st(1),%st") or the source (DC, DE: "fadd
// %st,%st(1)"), or not an operand at all (fcom, fld, fxch, ffree, ...).
ImplicitSt ImplicitStOperand(const cs_x86& x86);

// Prefixes objdump writes as words before the mnemonic ("data16 cs ",
// "notrack ", "rex.W ", "repz "), and the segment override it so shows,
// which the operands then must not show ("cs", or empty).
struct PrefixWords {
  std::string words;
  std::string_view segment;  // a static name
};
PrefixWords ReadPrefixWords(const cs_insn& insn, bool is_64bit, bool direct_branch);

// Mnemonics objdump spells otherwise: movd with REX.W (movq), wait
// (fwait), pushf/popf at the default size (Capstone: pushfq, pushfd).
void FixMnemonic(const cs_insn& insn, std::string* word);

// 66 90, objdump's "xchg %ax,%ax", which Capstone calls "nop".
bool IsXchgAxAx(const cs_insn& insn);

// "data16 cs " + "lock " + "nopw", and the operands joined by commas.
InstructionText JoinText(const PrefixWords& prefixes, const MnemonicParts& mnemonic,
                         const std::vector<std::string>& operands);

}  // namespace sample
