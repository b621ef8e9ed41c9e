// BuildGoPclntab: the bytes of a Go function table (.gopclntab) in each
// layout GoPclntab reads, written from the Go runtime's description of
// them (runtime/symtab.go of each release), for the tests of the reader
// and the fuzz seeds. Every function gets one file and one line for all
// of its pcs; 8-byte pointers, 1-byte instructions. Real binaries of one
// release (the Debian Go here, 1.19) check the reader against the
// toolchain; these check the other layouts against the description.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sample::testing {

enum class GoTableLayout { kGo12, kGo116, kGo118, kGo120 };

// A call inlined at a function's first `size` bytes (Go 1.18+ layouts):
// those pcs are at `line` of the same file in `name`, called from the
// function's own line.
struct GoInlinedCall {
  std::string name;
  uint32_t line = 0;
  uint64_t size = 0;
};

struct GoTableFunction {
  std::string name;
  uint64_t start = 0;
  uint64_t end = 0;  // the next function's start, or the table's end
  std::string file;
  uint32_t line = 0;
  std::optional<GoInlinedCall> inlined;
};

// A module as the linker lays it out, for the inline trees: the table, the
// funcdata the runtime's moduledata.gofunc points at, and the moduledata
// itself (within other words of its data section).
struct GoModule {
  std::vector<std::byte> pclntab;
  std::vector<std::byte> funcdata;  // go:func.* on
  std::vector<std::byte> data;      // a data section holding the moduledata
  uint64_t gofunc = 0;
};

// Functions in order of start; the next one's start is this one's end.
// Go 1.18+ tables measure entries from `text_start` (written in the header
// unless `text_in_header` is false, as a PIE's table holds 0 there).
std::vector<std::byte> BuildGoPclntab(GoTableLayout layout,
                                      const std::vector<GoTableFunction>& functions,
                                      uint64_t text_start, bool text_in_header = true);

// Go 1.18+ layouts: the table at `table_address`, the funcdata at
// `gofunc`, with the inline trees of the functions' inlined calls.
GoModule BuildGoModule(GoTableLayout layout, const std::vector<GoTableFunction>& functions,
                       uint64_t text_start, uint64_t table_address, uint64_t gofunc);

}  // namespace sample::testing
