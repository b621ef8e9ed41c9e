// AttText: Capstone's AT&T text as objdump prints it (see objdump_style.h).
#include <fmt/format.h>

#include "libsample/disasm/objdump_style.h"

namespace sample {
namespace {

// "0x10(%rax, %rbx)" -> "0x10(%rax,%rbx,1)": the parenthesised part of a
// memory operand, with objdump's explicit scale and %riz.
std::string FormatAddressRegisters(std::string_view inside, std::string_view mnemonic,
                                   const MemoryEncoding& memory) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t comma = inside.find(','); comma != std::string_view::npos;
       comma = inside.find(',', start)) {
    parts.push_back(TrimSpaces(inside.substr(start, comma - start)));
    start = comma + 1;
  }
  parts.push_back(TrimSpaces(inside.substr(start)));
  std::string base(parts[0]);
  std::string index(parts.size() > 1 ? parts[1] : "");
  std::string scale(parts.size() > 2 ? parts[2] : "");
  if (index.size() > 1 && mnemonic.starts_with('v')) {
    if (std::optional<std::string> general =
            EvexIndexRegister(mnemonic, std::string_view(index).substr(1), memory.addr32)) {
      index = "%" + *general;
    }
  }
  if (index.empty() && !base.empty() && memory.ShowsRiz()) {
    index = memory.addr32 ? "%eiz" : "%riz";
    scale = std::to_string(1u << memory.sib_scale);
  }
  if (!index.empty() && scale.empty()) scale = "1";
  std::string out = "(" + base;
  if (!index.empty()) out += "," + index + "," + scale;
  return out + ")";
}

std::string RewriteOperand(std::string_view op, std::string_view mnemonic,
                           const MemoryEncoding& memory, unsigned immediate_size) {
  std::string out;
  if (!op.empty() && op.front() == '*') {
    out += '*';
    op.remove_prefix(1);
  }
  if (!op.empty() && op.front() == '$') {
    return out + "$" + FormatImmediate(op.substr(1), immediate_size);
  }
  // A segment override: "%fs:0x28", "%es:(%rdi)".
  if (op.size() > 4 && op[0] == '%' && op[3] == ':') {
    out += op.substr(0, 4);
    op.remove_prefix(4);
  } else if (!op.empty() && op.front() == '%') {
    return out + WithoutSpaces(op);  // a register, maybe with "{%k1}{z}"
  }
  const size_t paren = op.find('(');
  const std::string_view displacement = TrimSpaces(op.substr(0, paren));
  if (!displacement.empty()) {
    out += FormatDisplacement(displacement);
  } else if (memory.zero_displacement) {
    out += "0x0";
  }
  if (paren == std::string_view::npos) return out;
  const size_t close = op.find(')', paren);
  if (close == std::string_view::npos) return out + WithoutSpaces(op.substr(paren));
  out += FormatAddressRegisters(op.substr(paren + 1, close - paren - 1), mnemonic, memory);
  return out + WithoutSpaces(op.substr(close + 1));  // "{1to16}"
}

uint8_t SuffixSize(char suffix) {
  switch (suffix) {
    case 'b':
      return 1;
    case 'w':
      return 2;
    case 'l':
      return 4;
    case 'q':
      return 8;
    default:
      return 0;
  }
}

// objdump writes a size suffix only when no register operand says the
// size, and not for the stack and branch instructions at their default
// size. Capstone writes one whenever the instruction has a size: it is the
// last letter of the mnemonic when what remains is Capstone's name for the
// instruction ("movq" for "mov"; not "movzbl", named "movzx"). A string
// instruction's register (stos %eax) is in the text only, not the details.
bool DropsSuffix(csh handle, const cs_insn& insn, std::string_view word,
                 const std::vector<std::string>& operands, bool is_64bit) {
  const char* name = cs_insn_name(handle, insn.id);
  if (name == nullptr || word.size() < 2) return false;
  const uint8_t size = SuffixSize(word.back());
  if (size == 0) return false;
  if (IsStringInstruction(insn)) {
    for (const std::string& op : operands) {
      if (op.starts_with('%') && op.find(':') == std::string::npos) return true;
    }
    return false;
  }
  if (word.substr(0, word.size() - 1) != name) return false;
  if (HasDefaultSize(insn.id) && size == (is_64bit ? 8 : 4)) return true;
  const cs_x86& x86 = insn.detail->x86;
  // A shift's count in %cl (D2, D3; shld, shrd 0F A5, 0F AD), and in/out's
  // port in %dx, say nothing of the operand size.
  const bool count_in_cl =
      x86.opcode[0] == 0xd2 || x86.opcode[0] == 0xd3 ||
      (x86.opcode[0] == 0x0f && (x86.opcode[1] == 0xa5 || x86.opcode[1] == 0xad));
  for (unsigned i = 0; i < x86.op_count; ++i) {
    const cs_x86_op& op = x86.operands[i];
    if (op.type != X86_OP_REG) continue;
    if (op.reg == X86_REG_CL && count_in_cl && IsShiftOrRotate(insn.id)) continue;
    if (op.reg == X86_REG_DX && IsPortInstruction(insn.id)) continue;
    if (op.size == size) return true;
  }
  return false;
}

// Operands objdump writes in another form than Capstone.
void FixOperandForms(const cs_insn& insn, std::vector<std::string>* operands) {
  const cs_x86& x86 = insn.detail->x86;
  if (IsShiftByOne(x86) && operands->size() == 2 && (*operands)[0] == "$0x1") {
    operands->erase(operands->begin());
  }
  // xchg with the accumulator, short form (91-97): objdump puts it first.
  if (insn.id == X86_INS_XCHG && x86.opcode[0] >= 0x91 && x86.opcode[0] <= 0x97 &&
      operands->size() == 2) {
    std::swap((*operands)[0], (*operands)[1]);
  }
  if (x86.opcode[0] >= 0xd8 && x86.opcode[0] <= 0xdf && x86.modrm >= 0xc0) {
    if (operands->size() == 2) {
      for (std::string& op : *operands) {
        if (op == "%st(0)") op = "%st";
      }
    } else if (operands->size() == 1) {
      const ImplicitSt st = ImplicitStOperand(x86);
      if (st == ImplicitSt::kDestination) operands->push_back("%st");
      if (st == ImplicitSt::kSource) operands->insert(operands->begin(), "%st");
    }
  }
  const bool string_op = IsStringInstruction(insn);
  for (std::string& op : *operands) {
    if (op == "%dx" && IsPortInstruction(insn.id)) op = "(%dx)";
    if (!string_op || !op.starts_with('(')) continue;
    if (op.find("di") != std::string::npos) op = "%es:" + op;
    if (op.find("si") != std::string::npos) op = "%ds:" + op;
  }
}

}  // namespace

InstructionText AttText(csh handle, const cs_insn& insn, bool is_64bit,
                        std::optional<uint64_t> target) {
  MnemonicParts mnemonic = SplitMnemonic(insn.mnemonic);
  std::string& word = mnemonic.word;
  std::vector<std::string> operands;
  if (target) {
    operands.push_back(fmt::format("{:x}", *target));
  } else {
    const MemoryEncoding memory = ReadMemoryEncoding(insn);
    const unsigned immediate_size = ImmediateSize(insn);
    for (const std::string_view op : SplitOperands(insn.op_str)) {
      operands.push_back(RewriteOperand(op, word, memory, immediate_size));
    }
  }
  FixOperandForms(insn, &operands);
  if (DropsSuffix(handle, insn, word, operands, is_64bit)) word.pop_back();
  FixMnemonic(insn, &word);
  if (IsXchgAxAx(insn)) {
    word = "xchg";
    operands = {"%ax", "%ax"};
  }
  const PrefixWords prefixes = ReadPrefixWords(insn, is_64bit, target.has_value());
  if (!prefixes.segment.empty()) {
    const std::string shown = fmt::format("%{}:", prefixes.segment);
    for (std::string& op : operands) {
      if (op.starts_with(shown)) op.erase(0, shown.size());
    }
  }
  return JoinText(prefixes, mnemonic, operands);
}

}  // namespace sample
