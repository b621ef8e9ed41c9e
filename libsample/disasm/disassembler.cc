#include "libsample/disasm/disassembler.h"

#include <capstone/capstone.h>

#include <memory>
#include <utility>

#include "libsample/disasm/objdump_style.h"
#include "libsample/disasm/undecoded_length.h"

namespace sample {
namespace {

using Flow = Instruction::Flow;

// The detail Capstone fills for each instruction (operands, groups,
// encoding), allocated once per Decode and freed with it.
struct InsnDeleter {
  void operator()(cs_insn* insn) const { cs_free(insn, 1); }
};
using InsnPtr = std::unique_ptr<cs_insn, InsnDeleter>;

bool IsConditionalBranch(unsigned id) {
  switch (id) {
    case X86_INS_JA:
    case X86_INS_JAE:
    case X86_INS_JB:
    case X86_INS_JBE:
    case X86_INS_JCXZ:
    case X86_INS_JE:
    case X86_INS_JECXZ:
    case X86_INS_JG:
    case X86_INS_JGE:
    case X86_INS_JL:
    case X86_INS_JLE:
    case X86_INS_JNE:
    case X86_INS_JNO:
    case X86_INS_JNP:
    case X86_INS_JNS:
    case X86_INS_JO:
    case X86_INS_JP:
    case X86_INS_JRCXZ:
    case X86_INS_JS:
    case X86_INS_LOOP:
    case X86_INS_LOOPE:
    case X86_INS_LOOPNE:
    // A transaction's abort path: a second way on, as a jcc's.
    case X86_INS_XBEGIN:
      return true;
    default:
      return false;
  }
}

// The target of a branch whose only operand is an immediate (Capstone has
// already added the address of the next instruction to the displacement).
std::optional<uint64_t> DirectTarget(const cs_x86& x86, CodeArch arch) {
  if (x86.op_count != 1 || x86.operands[0].type != X86_OP_IMM) return std::nullopt;
  uint64_t target = static_cast<uint64_t>(x86.operands[0].imm);
  if (arch == CodeArch::kI386) target &= 0xffffffffu;
  return target;
}

// How control leaves `insn`, and where to when the instruction says.
void ClassifyFlow(const cs_insn& insn, CodeArch arch, Instruction* out) {
  const cs_x86& x86 = insn.detail->x86;
  switch (insn.id) {
    case X86_INS_JMP:
      out->target = DirectTarget(x86, arch);
      out->flow = out->target ? Flow::kJump : Flow::kIndirectJump;
      return;
    case X86_INS_CALL:
      out->target = DirectTarget(x86, arch);
      out->flow = out->target ? Flow::kCall : Flow::kIndirectCall;
      return;
    // Far: a segment and an offset, not an address in this code.
    case X86_INS_LJMP:
      out->flow = Flow::kIndirectJump;
      return;
    case X86_INS_LCALL:
      out->flow = Flow::kIndirectCall;
      return;
    case X86_INS_RET:
    case X86_INS_RETF:
    case X86_INS_RETFQ:
    case X86_INS_IRET:
    case X86_INS_IRETD:
    case X86_INS_IRETQ:
      out->flow = Flow::kReturn;
      return;
    default:
      break;
  }
  if (IsConditionalBranch(insn.id)) {
    out->target = DirectTarget(x86, arch);
    if (out->target) out->flow = Flow::kConditionalJump;
  }
}

Instruction BadInstruction(uint64_t address, uint32_t size) {
  Instruction bad;
  bad.address = address;
  bad.size = size;
  bad.mnemonic = "(bad)";
  bad.bad = true;
  return bad;
}

}  // namespace

Result<Disassembler> Disassembler::Open(CodeArch arch, AsmSyntax syntax) {
  csh handle = 0;
  const cs_mode mode = arch == CodeArch::kX86_64 ? CS_MODE_64 : CS_MODE_32;
  if (const cs_err err = cs_open(CS_ARCH_X86, mode, &handle); err != CS_ERR_OK) {
    return Fail(std::string("cannot open the Capstone disassembler: ") + cs_strerror(err));
  }
  // Owned from here, so a failed option closes it.
  Disassembler disassembler(handle, arch, syntax);
  const size_t syntax_value = syntax == AsmSyntax::kAtt ? CS_OPT_SYNTAX_ATT : CS_OPT_SYNTAX_INTEL;
  if (const cs_err err = cs_option(handle, CS_OPT_SYNTAX, syntax_value); err != CS_ERR_OK) {
    return Fail(std::string("cannot set Capstone's syntax: ") + cs_strerror(err));
  }
  // Operands, prefixes and encoding offsets: what flow and objdump's text need.
  if (const cs_err err = cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON); err != CS_ERR_OK) {
    return Fail(std::string("cannot turn on Capstone's details: ") + cs_strerror(err));
  }
  return disassembler;
}

Disassembler::Disassembler(Disassembler&& other) noexcept
    : handle_(std::exchange(other.handle_, 0)), arch_(other.arch_), syntax_(other.syntax_) {}

Disassembler& Disassembler::operator=(Disassembler&& other) noexcept {
  if (this != &other) {
    if (handle_ != 0) cs_close(&handle_);
    handle_ = std::exchange(other.handle_, 0);
    arch_ = other.arch_;
    syntax_ = other.syntax_;
  }
  return *this;
}

Disassembler::~Disassembler() {
  if (handle_ != 0) cs_close(&handle_);
}

std::vector<Instruction> Disassembler::Decode(std::span<const std::byte> code,
                                              uint64_t address) const {
  std::vector<Instruction> instructions;
  if (code.empty()) return instructions;
  // A moved-from Disassembler has no handle: every byte is (bad).
  const InsnPtr insn(handle_ != 0 ? cs_malloc(handle_) : nullptr);
  const auto* bytes = reinterpret_cast<const uint8_t*>(code.data());
  size_t left = code.size();
  uint64_t at = address;
  // Instructions average under 4 bytes in compiled code.
  instructions.reserve(code.size() / 4 + 1);
  const bool is_64bit = arch_ == CodeArch::kX86_64;
  while (left > 0) {
    const uint8_t* start = bytes;
    const uint64_t start_address = at;
    // cs_disasm_iter reads at most `left` bytes from `bytes`, and on success
    // moves bytes, left and at past the instruction.
    if (insn != nullptr && cs_disasm_iter(handle_, &bytes, &left, &at, insn.get())) {
      Instruction& out = instructions.emplace_back();
      out.address = start_address;
      out.size = insn->size;
      ClassifyFlow(*insn, arch_, &out);
      InstructionText text = syntax_ == AsmSyntax::kAtt
                                 ? AttText(handle_, *insn, is_64bit, out.target)
                                 : IntelText(*insn, is_64bit, out.target);
      out.mnemonic = std::move(text.mnemonic);
      out.operands = std::move(text.operands);
      continue;
    }
    // One byte, or the whole of an instruction whose length is known
    // (undecoded_length.h), so the rest stays in step.
    const size_t skip =
        UndecodedLength(std::span<const uint8_t>(start, left), is_64bit).value_or(1);
    instructions.push_back(BadInstruction(start_address, static_cast<uint32_t>(skip)));
    bytes = start + skip;
    left -= skip;
    at = start_address + skip;
  }
  return instructions;
}

}  // namespace sample
