// Disassembler: machine code to instructions, for the annotate view.
//
// Capstone (Debian's libcapstone-dev, 4.0.2, BSD) decodes; we never decode
// x86 by hand nor run objdump per function. Its text is rewritten to read as
// `objdump -d` prints it (objdump_style.h), since that is what perf annotate
// shows: AT&T by default, no space after commas, size suffixes only where no
// register implies the size, every number in hex, a direct branch's operand
// its target address in bare hex ("jne 11d8", the view names the target).
//
// Every byte of the input is covered, in order, whatever it holds: bytes
// Capstone cannot decode become "(bad)" instructions and decoding resumes
// right after them, so padding, data in .text, a truncated last instruction
// and crafted bytes decode without trouble. Instruction boundaries are
// objdump's (on glibc's .text, 64- and 32-bit: all of them), but that an
// fwait (9b) before fnstsw & co. stays an instruction of its own, as the
// CPU runs it (objdump merges the two into "fstsw").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libsample/result.h"

namespace sample {

enum class AsmSyntax { kAtt, kIntel };  // kAtt: perf annotate's (objdump's) default
enum class CodeArch { kX86_64, kI386 };

struct Instruction {
  uint64_t address = 0;
  // Bytes. A (bad) instruction covers one byte, or, for an instruction
  // Capstone 4 does not know whose length its first bytes give (AVX-512
  // mask instructions, rdpkru: undecoded_length.h), the whole of it, so
  // the rest stays in step.
  uint32_t size = 0;
  std::string mnemonic;  // "mov", "jne", "lock cmpxchg"; "(bad)" when undecodable
  std::string operands;  // AT&T: "%rdi,%rax", as objdump prints them; empty for (bad)
  bool bad = false;
  enum class Flow : uint8_t {
    kNone,
    kJump,             // unconditional, direct
    kConditionalJump,  // jcc, jrcxz, loop*: direct, falls through too
    kCall,             // direct
    kReturn,           // ret, retf, iret
    kIndirectJump,     // through a register or memory (a jump table), or far
    kIndirectCall,     // through a register or memory, or far
  } flow = Flow::kNone;
  // A direct jump's or call's target address (rip-relative branches
  // resolved; in i386 code, wrapped to 32 bits).
  std::optional<uint64_t> target;
};

// A decoder for one (arch, syntax), cheap to reuse across functions; owns
// its Capstone handle. Decode does not change what the decoder holds, but
// Capstone writes an error code into its handle on every call, so one
// Disassembler must not decode on two threads at once: open one per thread.
class Disassembler {
 public:
  static Result<Disassembler> Open(CodeArch arch, AsmSyntax syntax);

  Disassembler(Disassembler&& other) noexcept;
  Disassembler& operator=(Disassembler&& other) noexcept;
  Disassembler(const Disassembler&) = delete;
  Disassembler& operator=(const Disassembler&) = delete;
  ~Disassembler();

  // The instructions of `code`, loaded at `address`, in order: contiguous
  // (each starts where the previous ended) and covering every byte exactly.
  // An undecodable byte becomes a (bad) Instruction and decoding resumes at
  // the next byte; a truncated last instruction becomes (bad) bytes. Never
  // fails: `code` may hold anything.
  std::vector<Instruction> Decode(std::span<const std::byte> code, uint64_t address) const;

  CodeArch arch() const { return arch_; }
  AsmSyntax syntax() const { return syntax_; }

 private:
  Disassembler(size_t handle, CodeArch arch, AsmSyntax syntax)
      : handle_(handle), arch_(arch), syntax_(syntax) {}

  size_t handle_ = 0;  // Capstone's csh (a size_t); 0 once moved from
  CodeArch arch_ = CodeArch::kX86_64;
  AsmSyntax syntax_ = AsmSyntax::kAtt;
};

}  // namespace sample
