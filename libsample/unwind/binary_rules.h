// BinaryRules: the x86_64 CFI rules of the binaries a DwarfUnwinder's
// frame-pointer checks (SkippedCallers, -g's fp,leaf) step through, kept by
// binary, not by process: each file is opened once (CfiRows: its rows read
// as libdwfl's unwinder reads them, .eh_frame then .debug_frame) whatever
// the processes that map it, and each .eh_frame row (each other address)
// is looked up once. A report of a program that runs thousands of
// children opened, mapped and unmapped every binary for each of them
// through a Dwfl of its own.
//
// Holds an open CfiRows per binary, at most kMaxBinaries (then one is let
// go for each new one). One thread at a time, as the unwinder.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "libsample/symbols/cfi_rows.h"
#include "libsample/unwind/dwarf_unwinder.h"

namespace sample {

class BinaryRules {
 public:
  static constexpr size_t kMaxBinaries = 256;

  // The rule of ELF virtual address `vaddr` (a lookup address: a return
  // address minus one) in `module`'s file; not `usable` where no CFI
  // covers it or the file cannot be read.
  const X86FrameRule& RuleAt(const UnwindModule& module, uint64_t vaddr);

 private:
  struct Binary {
    std::string binary, debug;
    std::optional<CfiRows> rows;
    std::map<uint64_t, CfiRow> eh_rows;                // .eh_frame's rows by start
    std::unordered_map<uint64_t, X86FrameRule> rules;  // the rest by vaddr (none: unusable)
    // The rules of recent pcs (into eh_rows' or rules' nodes, which stay).
    struct Memo {
      uint64_t vaddr = 0;
      const X86FrameRule* rule = nullptr;
    };
    std::array<Memo, 1024> memo;
  };
  // The rule of `vaddr` from the rows found so far, else the file's.
  static const X86FrameRule& Lookup(Binary& binary, uint64_t vaddr);

  std::unordered_map<std::string, std::unique_ptr<Binary>> binaries_;  // by binary and debug file
  Binary* last_ = nullptr;  // the last one looked up (one of binaries_)
};

}  // namespace sample
