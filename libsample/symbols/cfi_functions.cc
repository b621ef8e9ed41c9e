#include "libsample/symbols/cfi_functions.h"

#include <elfutils/libdw.h>

#include <gelf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "libsample/symbols/elf_file.h"

namespace sample {

namespace {

// The FDE starts of .eh_frame_hdr's search table, sorted: pairs of
// (initial location, FDE address), each a signed 4-byte offset from the
// section's own address (DW_EH_PE_datarel | DW_EH_PE_sdata4, what GNU ld
// and lld write). Empty for any other encoding, or without the section.
std::vector<uint64_t> FdeStarts(Elf* elf) {
  constexpr uint8_t kDatarelSdata4 = 0x3b;
  constexpr uint8_t kUdata4 = 0x03;
  Elf_Scn* section = FindElfSection(elf, ".eh_frame_hdr");
  GElf_Shdr header;
  Elf_Data* data = section ? elf_getdata(section, nullptr) : nullptr;
  if (data == nullptr || gelf_getshdr(section, &header) == nullptr || data->d_size < 12) return {};
  const auto* bytes = static_cast<const uint8_t*>(data->d_buf);
  // version 1; eh_frame_ptr's encoding (any 4-byte one), the count's, the table's
  if (bytes[0] != 1 || bytes[2] != kUdata4 || bytes[3] != kDatarelSdata4 ||
      (bytes[1] & 0x0f) != 0x0b) {
    return {};
  }
  uint32_t count;
  std::memcpy(&count, bytes + 8, 4);
  if (count > (data->d_size - 12) / 8) return {};
  std::vector<uint64_t> starts(count);
  for (uint32_t i = 0; i < count; ++i) {
    int32_t location;
    std::memcpy(&location, bytes + 12 + size_t{8} * i, 4);
    starts[i] = header.sh_addr + static_cast<int64_t>(location);
  }
  std::sort(starts.begin(), starts.end());  // sorted by the linker; a crafted file need not be
  return starts;
}

}  // namespace

std::optional<CfiRange> CfiRowRange(Dwarf_CFI* cfi, uint64_t vaddr) {
  Dwarf_Frame* frame = nullptr;
  if (dwarf_cfi_addrframe(cfi, vaddr, &frame) != 0) return std::nullopt;
  const std::unique_ptr<Dwarf_Frame, decltype(&free)> owned(frame, &free);  // malloc'd by libdw
  Dwarf_Addr start = 0, end = 0;
  bool signal_frame = false;
  if (dwarf_frame_info(frame, &start, &end, &signal_frame) < 0 || vaddr < start || vaddr >= end) {
    return std::nullopt;
  }
  return CfiRange{start, end};
}

struct CfiFunctions::State {
  explicit State(ElfFile file) : elf(std::move(file)) {}
  ~State() {
    if (cfi != nullptr) dwarf_cfi_end(cfi);
  }
  ElfFile elf;
  Dwarf_CFI* cfi = nullptr;      // from the ELF's .eh_frame; ended before the Elf*
  std::vector<uint64_t> starts;  // FdeStarts
};

Result<CfiFunctions> CfiFunctions::Open(const std::string& path) {
  TRY_ASSIGN(auto file, ElfFile::Open(path));
  auto state = std::make_unique<State>(std::move(file));
  state->cfi = dwarf_getcfi_elf(state->elf.get());
  if (state->cfi == nullptr) {
    return Fail(fmt::format("{}: no call-frame information: {}", path, dwarf_errmsg(-1)));
  }
  state->starts = FdeStarts(state->elf.get());
  return CfiFunctions(std::move(state));
}

CfiFunctions::CfiFunctions(std::unique_ptr<State> state) : state_(std::move(state)) {}
CfiFunctions::CfiFunctions(CfiFunctions&&) noexcept = default;
CfiFunctions& CfiFunctions::operator=(CfiFunctions&&) noexcept = default;
CfiFunctions::~CfiFunctions() = default;

std::optional<uint64_t> CfiFunctions::StartOf(uint64_t vaddr, CfiRange* same) const {
  // libdw gives the range of the FDE's row that holds vaddr (a prologue
  // and a body are rows of their own); the FDE itself starts at the last
  // start of .eh_frame_hdr's table at or below vaddr, within that row's
  // FDE when the table has one.
  if (same != nullptr) *same = CfiRange{vaddr, vaddr + 1};
  const std::optional<CfiRange> row = CfiRowRange(state_->cfi, vaddr);
  if (!row) return std::nullopt;
  const auto& starts = state_->starts;
  auto after = std::upper_bound(starts.begin(), starts.end(), vaddr);
  if (after != starts.begin() && *std::prev(after) <= row->start) {
    // Every address of the row up to the table's next start: the same
    // table start at or below it, and a row of the same FDE (libdw's rows
    // never start before their FDE), so the same answer. (Not in CFI no
    // compiler writes: instructions advancing a row past its FDE's end, or
    // DW_CFA_set_loc below its start, where libdw itself answers
    // inconsistently.)
    if (same != nullptr) {
      *same = CfiRange{row->start, after != starts.end() ? std::min(row->end, *after) : row->end};
    }
    return *std::prev(after);
  }
  return row->start;
}

std::optional<CfiRange> CfiFunctions::RangeOf(uint64_t vaddr) const {
  const std::optional<CfiRange> row = CfiRowRange(state_->cfi, vaddr);
  if (!row) return std::nullopt;
  const auto& starts = state_->starts;
  auto after = std::upper_bound(starts.begin(), starts.end(), vaddr);
  if (after == starts.begin() || *std::prev(after) > row->start) return row;  // as StartOf
  // The FDE ends where the last address it holds is: every address from
  // its start to there has a row, then none does up to the next FDE of the
  // table (alignment padding between functions; often nothing). Found by
  // probing: back from the next FDE's start in growing steps (the gap is
  // short), forward from this row's end for the last FDE, then halving.
  // Each probe costs a row lookup, which replays the FDE's instructions up
  // to it, so a walk over every row would cost the square of their number
  // (33 ms for one of cc1plus's functions); probing costs their number
  // times about twenty. A row found moves the known part past its end.
  Dwarf_CFI* cfi = state_->cfi;
  uint64_t in = row->end - 1;                         // the last address known to be in the FDE
  uint64_t out = after == starts.end() ? 0 : *after;  // the first known not to be; 0: none yet
  auto holds = [&](uint64_t probe) {
    const std::optional<CfiRange> found = CfiRowRange(cfi, probe);
    if (found) in = std::max(in, found->end - 1);
    return found.has_value();
  };
  if (out == 0) {
    for (uint64_t step = 1; out == 0; step *= 2) {
      if (in > UINT64_MAX - step) {
        out = UINT64_MAX;
      } else if (const uint64_t probe = in + step; !holds(probe)) {
        out = probe;
      }
    }
  } else {
    for (uint64_t step = 1; out - in > step && !holds(out - step); step *= 2) out -= step;
  }
  while (out - in > 1) {
    const uint64_t middle = in + (out - in) / 2;
    if (!holds(middle)) out = middle;
  }
  return CfiRange{*std::prev(after), out};
}

}  // namespace sample
