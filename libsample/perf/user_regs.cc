#include "libsample/perf/user_regs.h"

#include <sys/utsname.h>

#include <bit>

namespace sample {
namespace {

constexpr int kNone = -1;
constexpr int kPc = -2;

// x86_64 perf register numbers (asm/perf_regs.h): AX BX CX DX SI DI BP SP
// IP FLAGS CS SS DS ES FS GS R8..R15, mapped to the DWARF numbering of the
// System V psABI: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, return address 16.
constexpr std::array<int, 24> kX86PerfToDwarf = {
    0,     3,     2,     1,     4, 5, 6,  7,  kPc, kNone, kNone, kNone,
    kNone, kNone, kNone, kNone, 8, 9, 10, 11, 12,  13,    14,    15};
constexpr int kX86Sp = 7;
constexpr size_t kX86FrameRegs = 17;  // 0..16, the return address column included

// The same perf numbers for an i386 process (their low 32 bits), to the
// i386 DWARF numbering: eax ecx edx ebx esp ebp esi edi, return address 8.
constexpr std::array<int, 9> kI386PerfToDwarf = {0, 3, 1, 2, 6, 7, 5, 4, kPc};
constexpr int kI386Sp = 4;
constexpr size_t kI386FrameRegs = 9;  // 0..8, the return address column included

// aarch64 perf numbers: X0..X28, X29 (fp), LR (x30), SP, PC; DWARF numbers
// x0..x30 as 0..30 and sp as 31; the pc has no DWARF number.
constexpr int kArm64PerfRegs = 33;
constexpr int kArm64Sp = 31;
constexpr size_t kArm64FrameRegs = 32;

int PerfToDwarf(Arch arch, int perf_reg) {
  switch (arch) {
    case Arch::kX86_64:
      return perf_reg < static_cast<int>(kX86PerfToDwarf.size()) ? kX86PerfToDwarf[perf_reg]
                                                                 : kNone;
    case Arch::kI386:
      return perf_reg < static_cast<int>(kI386PerfToDwarf.size()) ? kI386PerfToDwarf[perf_reg]
                                                                  : kNone;
    case Arch::kAarch64:
      if (perf_reg < 32) return perf_reg;
      return perf_reg == 32 ? kPc : kNone;
    case Arch::kUnknown:
      break;
  }
  return kNone;
}

}  // namespace

Arch ArchFromMachine(std::string_view machine) {
  if (machine == "x86_64") return Arch::kX86_64;
  if (machine == "aarch64" || machine == "arm64") return Arch::kAarch64;
  return Arch::kUnknown;
}

Arch HostArch() {
  utsname uts{};
  if (uname(&uts) != 0) return Arch::kUnknown;
  return ArchFromMachine(uts.machine);
}

uint64_t UnwindRegsMask(Arch arch) {
  switch (arch) {
    case Arch::kX86_64:
    case Arch::kI386:
      return 0x1ffull | 0xff0000ull;  // AX..IP and R8..R15
    case Arch::kAarch64:
      return (uint64_t{1} << kArm64PerfRegs) - 1;
    case Arch::kUnknown:
      break;
  }
  return 0;
}

uint64_t LeafRegsMask(Arch arch) {
  switch (arch) {
    case Arch::kX86_64:
    case Arch::kI386:
      return (1ull << 6) | (1ull << 7) | (1ull << 8);  // BP, SP, IP
    case Arch::kAarch64:
      return (1ull << 29) | (1ull << 30) | (1ull << 31) | (1ull << 32);  // fp, lr, sp, pc
    case Arch::kUnknown:
      break;
  }
  return 0;
}

std::optional<DwarfRegisters> ToDwarfRegisters(Arch arch, uint64_t perf_mask,
                                               const U64List& values) {
  if (arch == Arch::kUnknown) return std::nullopt;
  if (CountBits(perf_mask) != values.size()) return std::nullopt;
  DwarfRegisters regs;
  regs.arch = arch;
  // The column CFI names the return address by, seeded with the pc.
  int return_column = kNone;
  int sp = kArm64Sp;
  uint64_t width_mask = ~uint64_t{0};
  switch (arch) {
    case Arch::kX86_64:
      regs.count = kX86FrameRegs;
      return_column = 16;
      sp = kX86Sp;
      break;
    case Arch::kI386:
      regs.count = kI386FrameRegs;
      return_column = 8;
      sp = kI386Sp;
      width_mask = 0xffffffff;
      break;
    case Arch::kAarch64:
    case Arch::kUnknown:
      regs.count = kArm64FrameRegs;
      break;
  }
  bool has_pc = false;
  size_t index = 0;
  for (uint64_t mask = perf_mask; mask != 0; mask &= mask - 1, ++index) {
    const int dwarf = PerfToDwarf(arch, std::countr_zero(mask));
    const uint64_t value = values[index] & width_mask;
    if (dwarf == kPc) {
      regs.pc = value;
      has_pc = true;
      if (return_column != kNone) {
        regs.value[return_column] = value;
        regs.present |= uint64_t{1} << return_column;
      }
    } else if (dwarf >= 0) {
      regs.value[dwarf] = value;
      regs.present |= uint64_t{1} << dwarf;
    }
  }
  if (!has_pc || !regs.Has(sp)) return std::nullopt;
  regs.sp = regs.value[sp];
  return regs;
}

std::optional<PcAndSp> UserPcAndSp(Arch arch, uint64_t perf_mask, const U64List& values) {
  // The perf numbers of the stack pointer and the pc.
  int sp = 0;
  int pc = 0;
  uint64_t width_mask = ~uint64_t{0};
  switch (arch) {
    case Arch::kX86_64:
    case Arch::kI386:
      sp = 7;
      pc = 8;
      if (arch == Arch::kI386) width_mask = 0xffffffff;
      break;
    case Arch::kAarch64:
      sp = 31;
      pc = 32;
      break;
    case Arch::kUnknown:
      return std::nullopt;
  }
  if (CountBits(perf_mask) != values.size() || (perf_mask >> sp & 1) == 0 ||
      (perf_mask >> pc & 1) == 0) {
    return std::nullopt;
  }
  // A register's place: the registers below it in the mask.
  const auto at = [perf_mask](int reg) {
    return CountBits(perf_mask & ((uint64_t{1} << reg) - 1));
  };
  return PcAndSp{values[at(pc)] & width_mask, values[at(sp)] & width_mask};
}

}  // namespace sample
