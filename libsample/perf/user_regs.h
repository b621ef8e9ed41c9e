// User registers in samples (PERF_SAMPLE_REGS_USER) and their DWARF names.
//
// The kernel writes the registers selected by attr.sample_regs_user in
// increasing bit order, numbered by the architecture's perf_regs.h; CFI
// names registers by DWARF number. This maps one to the other for the
// architectures we unwind (x86_64, aarch64), and says which registers the
// recorder asks for. The perf numbers are spelled here, not taken from the
// host's <asm/perf_regs.h>, so a report on one architecture reads a
// recording from another.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "libsample/count_bits.h"
#include "libsample/perf/perf_record.h"

namespace sample {

// kI386: a 32-bit process on an x86_64 kernel (PERF_SAMPLE_REGS_ABI_32):
// the kernel gives its registers by x86_64 perf numbers, and its CFI uses
// the i386 DWARF numbering. Never a recording host's architecture.
enum class Arch { kUnknown, kX86_64, kAarch64, kI386 };

// From uname's machine field as stored in the file ("x86_64", "aarch64").
Arch ArchFromMachine(std::string_view machine);
Arch HostArch();

// Registers --call-graph dwarf records: every general register CFI may
// name (x86_64: 17 of them, without flags and segments; aarch64: x0-x30,
// sp, pc). 0 for an unknown architecture.
uint64_t UnwindRegsMask(Arch arch);
// Registers the frame-pointer leaf fix needs: stack, frame and instruction
// pointers (and the link register on aarch64).
uint64_t LeafRegsMask(Arch arch);

// A register file in DWARF numbering, as the unwinder seeds its first frame.
struct DwarfRegisters {
  static constexpr size_t kMax = 32;
  Arch arch = Arch::kUnknown;
  std::array<uint64_t, kMax> value{};
  uint64_t present = 0;  // bit n: value[n] was in the sample
  size_t count = 0;      // registers 0..count-1 are the architecture's frame set
  uint64_t pc = 0;
  uint64_t sp = 0;
  bool Has(size_t n) const { return n < kMax && (present >> n & 1) != 0; }
};

// Converts a sample's registers (`perf_mask` = the attr's sample_regs_user)
// to DWARF numbering; nullopt when the architecture is unknown or the pc or
// stack pointer is missing.
std::optional<DwarfRegisters> ToDwarfRegisters(Arch arch, uint64_t perf_mask,
                                               const U64List& values);

// Just the pc and stack pointer of ToDwarfRegisters (nullopt where it
// gives none), without filling a register file: for the recorder's scan
// of every sample's stack copy.
struct PcAndSp {
  uint64_t pc = 0;
  uint64_t sp = 0;
};
std::optional<PcAndSp> UserPcAndSp(Arch arch, uint64_t perf_mask, const U64List& values);

}  // namespace sample
