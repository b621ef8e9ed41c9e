// CfiRows: the call-frame information row of one address of a binary, read
// the way the DWARF unwinder reads it (RuleFor in
// libsample/unwind/dwarf_unwinder.cc, through libdwfl): the binary's
// .eh_frame first; for an address it does not cover, .debug_frame, from the
// binary when the binary has DWARF sections (libdwfl's test: .debug_info,
// .debug_line or .debug_frame with contents), else from its separate debug
// file. So the recorder can embed the rows the report's unwinder would
// have used.
//
// Owns the binary's ElfFile (also lent to readers of its bytes) and the
// Dwarf_CFI of its .eh_frame; .debug_frame is opened on first need, on a
// private mapping of its file in which every other DWARF section is hidden
// (dwarf_begin_elf would inflate every compressed one at once, and a
// distribution's debug file holds hundreds of MiB of them). Move-only; one
// thread at a time (libdw's CFI caches are not locked).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "libsample/result.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/embedded_binary.h"

namespace sample {

// Where a row came from.
enum class CfiSource : uint8_t { kEhFrame, kDebugFrame };

class CfiRows {
 public:
  // `binary_path` is the mapped ELF file; `debug_path`, if not empty, its
  // separate debug file. Fails only if the binary cannot be read as ELF: a
  // binary without CFI just has no rows. The debug file is opened later,
  // if ever, and a bad one just gives no .debug_frame rows.
  static Result<CfiRows> Open(const std::string& binary_path, const std::string& debug_path);

  CfiRows(CfiRows&&) noexcept;
  CfiRows& operator=(CfiRows&&) noexcept;
  ~CfiRows();

  // The row holding ELF virtual address `vaddr` (a lookup address: `pc - 1`
  // for return addresses): its range and its rule as ReadX86FrameRule
  // reads it (not `usable` for what the cached walk cannot step).
  // x86_64 binaries only: the rule has x86_64's registers, so for any
  // other machine there are no rows (nullopt). `source`, when given,
  // receives where the row came from.
  std::optional<CfiRow> RowAt(uint64_t vaddr, CfiSource* source = nullptr);

  const ElfFile& binary() const;
  // Why the file .debug_frame was to come from was refused (a zlib bomb:
  // libsample/symbols/compressed_sections.h), naming it and its claim; ""
  // when it was not, or not yet opened.
  const std::string& debug_refused() const;

 private:
  struct State;
  explicit CfiRows(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace sample
