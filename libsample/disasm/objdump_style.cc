#include "libsample/disasm/objdump_style.h"

#include <fmt/format.h>

#include <cctype>

namespace sample {
namespace {

// A number as Capstone prints one: "-0x1f", "12", "0xff".
struct Number {
  bool negative = false;
  uint64_t magnitude = 0;
};

std::optional<Number> ParseNumber(std::string_view text) {
  Number number;
  if (!text.empty() && text.front() == '-') {
    number.negative = true;
    text.remove_prefix(1);
  }
  unsigned base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty() || text.size() > 16) return std::nullopt;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    unsigned digit = 0;
    if (std::isdigit(u)) {
      digit = u - '0';
    } else if (base == 16 && std::isxdigit(u)) {
      digit = static_cast<unsigned>(std::tolower(u) - 'a' + 10);
    } else {
      return std::nullopt;
    }
    number.magnitude = number.magnitude * base + digit;
  }
  return number;
}

bool IsPrefixByte(uint8_t byte) {
  switch (byte) {
    case 0xf0:
    case 0xf2:
    case 0xf3:
    case 0x2e:
    case 0x36:
    case 0x3e:
    case 0x26:
    case 0x64:
    case 0x65:
    case 0x66:
    case 0x67:
      return true;
    default:
      return false;
  }
}

const char* IgnoredSegmentName(uint8_t prefix) {
  switch (prefix) {
    case 0x2e:
      return "cs";
    case 0x36:
      return "ss";
    case 0x3e:
      return "ds";
    case 0x26:
      return "es";
    default:
      return nullptr;
  }
}

}  // namespace

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

std::string WithoutSpaces(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c != ' ') out += c;
  }
  return out;
}

MnemonicParts SplitMnemonic(std::string_view mnemonic) {
  const size_t last_space = mnemonic.rfind(' ');
  if (last_space == std::string_view::npos) return {std::string_view(), std::string(mnemonic)};
  return {mnemonic.substr(0, last_space + 1), std::string(mnemonic.substr(last_space + 1))};
}

std::vector<std::string_view> SplitOperands(std::string_view text) {
  std::vector<std::string_view> operands;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      operands.push_back(TrimSpaces(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  const std::string_view last = TrimSpaces(text.substr(start));
  if (!last.empty() || !operands.empty()) operands.push_back(last);
  return operands;
}

std::string FormatDisplacement(std::string_view text) {
  const std::optional<Number> number = ParseNumber(text);
  if (!number) return std::string(text);
  return fmt::format("{}0x{:x}", number->negative ? "-" : "", number->magnitude);
}

std::string FormatImmediate(std::string_view text, unsigned size) {
  const std::optional<Number> number = ParseNumber(text);
  if (!number) return std::string(text);
  uint64_t bits = number->negative ? 0 - number->magnitude : number->magnitude;
  if (size > 0 && size < 8) bits &= (uint64_t{1} << (8 * size)) - 1;
  return fmt::format("0x{:x}", bits);
}

unsigned ImmediateSize(const cs_insn& insn) {
  // Capstone gives xabort's 8-bit immediate the size of a register.
  if (insn.id == X86_INS_XABORT) return 1;
  const cs_x86& x86 = insn.detail->x86;
  for (unsigned i = 0; i < x86.op_count; ++i) {
    if (x86.operands[i].type == X86_OP_IMM) return x86.operands[i].size;
  }
  return 0;
}

MemoryEncoding ReadMemoryEncoding(const cs_insn& insn) {
  const cs_x86& x86 = insn.detail->x86;
  MemoryEncoding memory;
  memory.zero_displacement = x86.encoding.disp_size > 0 && x86.disp == 0;
  memory.addr32 = x86.addr_size == 4;
  const unsigned modrm_at = x86.encoding.modrm_offset;
  if (modrm_at == 0 || modrm_at + 1 >= insn.size || x86.addr_size == 2) return memory;
  const uint8_t modrm = insn.bytes[modrm_at];
  if ((modrm >> 6) == 3 || (modrm & 7) != 4) return memory;
  const uint8_t sib = insn.bytes[modrm_at + 1];
  memory.sib_without_index = ((sib >> 3) & 7) == 4;
  memory.sib_base = sib & 7;
  memory.sib_without_base = (modrm >> 6) == 0 && memory.sib_base == 5;
  memory.sib_scale = sib >> 6;
  return memory;
}

std::string GeneralRegister(unsigned n, bool wide) {
  static constexpr const char* kNames[] = {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di"};
  if (n < 8) return fmt::format("{}{}", wide ? "r" : "e", kNames[n]);
  return fmt::format("r{}{}", n, wide ? "" : "d");
}

std::optional<std::string> EvexIndexRegister(std::string_view mnemonic, std::string_view reg,
                                             bool addr32) {
  if (mnemonic.find("gather") != std::string_view::npos ||
      mnemonic.find("scatter") != std::string_view::npos) {
    return std::nullopt;
  }
  if (reg.size() < 4 || std::string_view("xyz").find(reg[0]) == std::string_view::npos ||
      reg.substr(1, 2) != "mm") {
    return std::nullopt;
  }
  const std::optional<Number> n = ParseNumber(reg.substr(3));
  if (!n || n->negative || n->magnitude > 31) return std::nullopt;
  // Capstone adds EVEX.V' as a fifth bit; a general index has four.
  return GeneralRegister(static_cast<unsigned>(n->magnitude & 15), !addr32);
}

bool IsShiftOrRotate(unsigned id) {
  switch (id) {
    case X86_INS_SHL:
    case X86_INS_SAL:
    case X86_INS_SHR:
    case X86_INS_SAR:
    case X86_INS_ROL:
    case X86_INS_ROR:
    case X86_INS_RCL:
    case X86_INS_RCR:
    case X86_INS_SHLD:
    case X86_INS_SHRD:
      return true;
    default:
      return false;
  }
}

bool IsShiftByOne(const cs_x86& x86) { return x86.opcode[0] == 0xd0 || x86.opcode[0] == 0xd1; }

bool IsStringInstruction(const cs_insn& insn) {
  // One-byte opcodes; Capstone's ids alone would not do (X86_INS_MOVSD is
  // also SSE's movsd).
  const cs_x86& x86 = insn.detail->x86;
  const uint8_t opcode = x86.opcode[0];
  const bool string_opcode = (opcode >= 0xa4 && opcode <= 0xa7) ||
                             (opcode >= 0xaa && opcode <= 0xaf) ||
                             (opcode >= 0x6c && opcode <= 0x6f);
  return string_opcode && x86.opcode[1] == 0;
}

bool IsPortInstruction(unsigned id) {
  switch (id) {
    case X86_INS_IN:
    case X86_INS_OUT:
    case X86_INS_INSB:
    case X86_INS_INSW:
    case X86_INS_INSD:
    case X86_INS_OUTSB:
    case X86_INS_OUTSW:
    case X86_INS_OUTSD:
      return true;
    default:
      return false;
  }
}

bool HasDefaultSize(unsigned id) {
  switch (id) {
    case X86_INS_CALL:
    case X86_INS_JMP:
    case X86_INS_RET:
    case X86_INS_PUSH:
    case X86_INS_POP:
      return true;
    default:
      return false;
  }
}

ImplicitSt ImplicitStOperand(const cs_x86& x86) {
  const uint8_t opcode = x86.opcode[0];
  if (opcode < 0xd8 || opcode > 0xdf || x86.modrm < 0xc0) return ImplicitSt::kNone;
  const unsigned reg = (x86.modrm >> 3) & 7;
  // fcom and fcomp (/2, /3 of D8, DC, DE) compare %st with one operand;
  // DA and DB /0-/3 are fcmov, DB and DF /5, /6 fucomi(p) and fcomi(p).
  const bool compare = reg == 2 || reg == 3;
  switch (opcode) {
    case 0xd8:
      return compare ? ImplicitSt::kNone : ImplicitSt::kDestination;
    case 0xda:
      return reg <= 3 ? ImplicitSt::kDestination : ImplicitSt::kNone;
    case 0xdb:
      return reg <= 3 || reg == 5 || reg == 6 ? ImplicitSt::kDestination : ImplicitSt::kNone;
    case 0xdf:
      return reg == 5 || reg == 6 ? ImplicitSt::kDestination : ImplicitSt::kNone;
    case 0xdc:
    case 0xde:
      return compare ? ImplicitSt::kNone : ImplicitSt::kSource;
    default:
      return ImplicitSt::kNone;
  }
}

PrefixWords ReadPrefixWords(const cs_insn& insn, bool is_64bit, bool direct_branch) {
  const cs_x86& x86 = insn.detail->x86;
  PrefixWords prefixes;
  // Operand-size prefixes beyond the one an instruction uses: "data16 cs
  // nopw". Where REX.W sets the size, all of them (the TLS sequence's
  // "data16 lea", "data16 data16 rex.W call"), but for the mandatory 66 of
  // a 0F-map SSE instruction.
  unsigned operand_size_prefixes = 0;
  for (unsigned i = 0; i < insn.size && IsPrefixByte(insn.bytes[i]); ++i) {
    if (insn.bytes[i] == 0x66) ++operand_size_prefixes;
  }
  const bool rex_w = is_64bit && (x86.rex & 0x08) != 0;
  const bool one_byte_opcode = x86.opcode[0] != 0x0f;
  unsigned data16 = operand_size_prefixes;
  if (data16 > 0 && !(rex_w && one_byte_opcode)) --data16;
  for (unsigned i = 0; i < data16; ++i) prefixes.words += "data16 ";
  // A REX.W that changes nothing.
  if (rex_w && one_byte_opcode && (HasDefaultSize(insn.id) || insn.id == X86_INS_NOP)) {
    prefixes.words += "rex.W ";
  }
  const uint8_t segment = x86.prefix[1];
  const bool indirect_branch =
      !direct_branch && (insn.id == X86_INS_JMP || insn.id == X86_INS_CALL);
  if (segment == 0x3e && indirect_branch) {
    prefixes.words += "notrack ";
  } else if (const char* name = IgnoredSegmentName(segment); name != nullptr && is_64bit) {
    // 64-bit code ignores these overrides; objdump names them as words.
    prefixes.words += fmt::format("{} ", name);
    prefixes.segment = name;
  }
  // f3 c3, the return AMD's branch predictors once wanted: Capstone drops the rep.
  if (insn.id == X86_INS_RET && insn.size > 1 && insn.bytes[0] == 0xf3) prefixes.words += "repz ";
  return prefixes;
}

void FixMnemonic(const cs_insn& insn, std::string* word) {
  // movd with REX.W moves 64 bits (Capstone's id is already MOVQ).
  if ((insn.detail->x86.rex & 0x08) != 0 && *word == "movd") *word = "movq";
  switch (insn.id) {
    case X86_INS_WAIT:
      *word = "fwait";
      break;
    case X86_INS_PUSHFD:
    case X86_INS_PUSHFQ:
      *word = "pushf";
      break;
    case X86_INS_POPFD:
    case X86_INS_POPFQ:
      *word = "popf";
      break;
    default:
      break;
  }
}

bool IsXchgAxAx(const cs_insn& insn) {
  const cs_x86& x86 = insn.detail->x86;
  return insn.id == X86_INS_NOP && x86.opcode[0] == 0x90 && x86.prefix[2] == 0x66;
}

InstructionText JoinText(const PrefixWords& prefixes, const MnemonicParts& mnemonic,
                         const std::vector<std::string>& operands) {
  InstructionText text;
  text.mnemonic = prefixes.words + std::string(mnemonic.prefixes) + mnemonic.word;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (i > 0) text.operands += ',';
    text.operands += operands[i];
  }
  return text;
}

}  // namespace sample
