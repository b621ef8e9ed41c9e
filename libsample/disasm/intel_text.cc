// IntelText: Capstone's Intel text as `objdump -M intel` prints it (see
// objdump_style.h): "QWORD PTR [rsp+0x10]", "ds:0x0", "st(2),st".
#include <fmt/format.h>

#include <cctype>

#include "libsample/disasm/objdump_style.h"

namespace sample {
namespace {

bool StartsWithDigit(std::string_view text) {
  return !text.empty() && std::isdigit(static_cast<unsigned char>(text.front()));
}

// "rax + rbx*2 - 0x10" -> "rax+rbx*2-0x10", with objdump's "*1", "+0x0",
// riz and EVEX index fixes; or "ds:0x10" (returned in *absolute) for an
// address without registers.
std::string FormatBracketed(std::string_view inside, std::string_view mnemonic,
                            const MemoryEncoding& memory, bool* absolute) {
  std::string base, index, scale, displacement;
  size_t start = 0;
  char sign = '+';
  for (size_t i = 0; i <= inside.size(); ++i) {
    if (i < inside.size() && inside[i] != '+' && inside[i] != '-') continue;
    // A '-' right after '[' or another sign belongs to the number.
    const std::string_view term = TrimSpaces(inside.substr(start, i - start));
    if (term.empty() && i < inside.size()) {
      sign = inside[i];
      start = i + 1;
      continue;
    }
    if (StartsWithDigit(term)) {
      displacement = FormatDisplacement(sign == '-' ? fmt::format("-{}", term) : std::string(term));
    } else if (const size_t star = term.find('*'); star != std::string_view::npos) {
      index = term.substr(0, star);
      scale = term.substr(star + 1);
    } else if (base.empty() && index.empty()) {
      base = term;
    } else {
      index = term;
    }
    if (i < inside.size()) sign = inside[i];
    start = i + 1;
  }
  // Capstone writes a lone index at scale 1 as if it were a base.
  if (memory.sib_without_base && index.empty() && !base.empty()) std::swap(base, index);
  if (!index.empty() && mnemonic.starts_with('v')) {
    if (std::optional<std::string> general = EvexIndexRegister(mnemonic, index, memory.addr32)) {
      index = *general;
    }
  }
  if (index.empty() && !base.empty() && memory.ShowsRiz()) {
    index = memory.addr32 ? "eiz" : "riz";
    scale = std::to_string(1u << memory.sib_scale);
  }
  if (!index.empty() && scale.empty()) scale = "1";
  if (displacement.empty() && memory.zero_displacement) displacement = "0x0";
  // objdump writes a negative rip-relative displacement as its 64 bits.
  if (base == "rip" && displacement.starts_with('-')) {
    displacement = FormatImmediate(displacement, 8);
  }
  *absolute = base.empty() && index.empty();
  if (*absolute) return displacement.empty() ? "0x0" : displacement;
  std::string out = base;
  if (!index.empty()) out += (out.empty() ? "" : "+") + index + "*" + scale;
  if (!displacement.empty()) out += (displacement.front() == '-' ? "" : "+") + displacement;
  return "[" + out + "]";
}

// "qword ptr fs:[rax + 8]" -> "QWORD PTR fs:[rax+0x8]"; "dword ptr [0]"
// -> "DWORD PTR ds:0x0".
std::string RewriteMemory(std::string_view op, std::string_view mnemonic,
                          const MemoryEncoding& memory, bool moffs) {
  std::string out;
  const size_t ptr = op.find(" ptr ");
  if (ptr != std::string_view::npos) {
    std::string size(op.substr(0, ptr));
    if (size == "xword") size = "tbyte";  // Capstone's name for 80 bits
    for (char& c : size) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    // objdump writes no size for movabs's 64-bit address (moffs).
    if (!moffs) out += size + " PTR ";
    op.remove_prefix(ptr + 5);
  }
  const size_t open = op.find('[');
  const size_t close = op.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) {
    return out + WithoutSpaces(op);
  }
  std::string segment(TrimSpaces(op.substr(0, open)));
  bool absolute = false;
  const std::string address =
      FormatBracketed(op.substr(open + 1, close - open - 1), mnemonic, memory, &absolute);
  if (absolute && segment.empty()) segment = "ds:";
  return out + segment + address + WithoutSpaces(op.substr(close + 1));
}

// Capstone's operands, each as objdump writes it.
std::vector<std::string> RewriteOperands(const cs_insn& insn, std::string_view word,
                                         const PrefixWords& prefixes) {
  const cs_x86& x86 = insn.detail->x86;
  const MemoryEncoding memory = ReadMemoryEncoding(insn);
  const unsigned immediate_size = ImmediateSize(insn);
  const bool moffs = x86.opcode[0] >= 0xa0 && x86.opcode[0] <= 0xa3;
  const bool string_op = IsStringInstruction(insn);
  std::vector<std::string> operands;
  for (std::string_view op : SplitOperands(insn.op_str)) {
    if (StartsWithDigit(op) || (op.size() > 1 && op[0] == '-' && StartsWithDigit(op.substr(1)))) {
      // objdump keeps a shift by one's "1".
      operands.push_back(IsShiftByOne(x86) ? std::string(op) : FormatImmediate(op, immediate_size));
      continue;
    }
    if (op.find('[') == std::string_view::npos) {
      operands.push_back(WithoutSpaces(op));  // a register, maybe with "{k1}{z}"
      continue;
    }
    std::string memory_text = RewriteMemory(op, word, memory, moffs);
    if (!prefixes.segment.empty()) {
      const std::string shown = fmt::format("{}:", prefixes.segment);
      if (const size_t at = memory_text.find(shown); at != std::string::npos) {
        memory_text.erase(at, shown.size());
      }
    }
    if (string_op && memory_text.find(':') == std::string::npos) {
      const size_t open = memory_text.find('[');
      const bool destination = memory_text.find("di]", open) != std::string::npos;
      memory_text.insert(open, destination ? "es:" : "ds:");
    }
    operands.push_back(std::move(memory_text));
  }
  return operands;
}

// Operands and mnemonics objdump writes in another form than Capstone.
void FixForms(const cs_insn& insn, std::string* word, std::vector<std::string>* operands) {
  const cs_x86& x86 = insn.detail->x86;
  if (x86.opcode[0] >= 0xd8 && x86.opcode[0] <= 0xdf && x86.modrm >= 0xc0) {
    if (operands->size() == 2) {
      for (std::string& op : *operands) {
        if (op == "st(0)") op = "st";
      }
    } else if (operands->size() == 1) {
      // Intel order: the destination first.
      const ImplicitSt st = ImplicitStOperand(x86);
      if (st == ImplicitSt::kDestination) operands->insert(operands->begin(), "st");
      if (st == ImplicitSt::kSource) operands->push_back("st");
    }
  }
  // xchg with the accumulator, short form (91-97): objdump puts it last.
  if (insn.id == X86_INS_XCHG && x86.opcode[0] >= 0x91 && x86.opcode[0] <= 0x97 &&
      operands->size() == 2) {
    std::swap((*operands)[0], (*operands)[1]);
  }
  // objdump names a string instruction without its size ("stos"), which
  // its operands give.
  if (IsStringInstruction(insn) && word->size() > 1) word->pop_back();
  FixMnemonic(insn, word);
  if (IsXchgAxAx(insn)) {
    *word = "xchg";
    *operands = {"ax", "ax"};
  }
  // Capstone sizes (u)comiss's and (u)comisd's memory operand as a whole
  // register; they read one float or double.
  if (word->ends_with("comiss") || word->ends_with("comisd")) {
    for (std::string& op : *operands) {
      if (op.starts_with("XMMWORD PTR ")) op.replace(0, 7, word->back() == 's' ? "DWORD" : "QWORD");
    }
  }
}

}  // namespace

InstructionText IntelText(const cs_insn& insn, bool is_64bit, std::optional<uint64_t> target) {
  const PrefixWords prefixes = ReadPrefixWords(insn, is_64bit, target.has_value());
  MnemonicParts mnemonic = SplitMnemonic(insn.mnemonic);
  std::vector<std::string> operands;
  if (target) {
    operands.push_back(fmt::format("{:x}", *target));
  } else {
    operands = RewriteOperands(insn, mnemonic.word, prefixes);
  }
  FixForms(insn, &mnemonic.word, &operands);
  return JoinText(prefixes, mnemonic, operands);
}

}  // namespace sample
