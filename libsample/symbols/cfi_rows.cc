#include "libsample/symbols/cfi_rows.h"

#include <elf.h>
#include <elfutils/libdw.h>
#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <string_view>

#include "libsample/symbols/cfi_functions.h"
#include "libsample/symbols/compressed_sections.h"
#include "libsample/symbols/x86_frame_rule.h"

namespace sample {
namespace {

constexpr std::string_view kDebugFrame[] = {".debug_frame", ".zdebug_frame"};

bool HasContents(Elf* elf, std::string_view name) {
  Elf_Scn* scn = FindElfSection(elf, name);
  GElf_Shdr shdr;
  return scn != nullptr && gelf_getshdr(scn, &shdr) != nullptr && shdr.sh_type != SHT_NOBITS &&
         shdr.sh_size > 0;
}

// What makes dwarf_begin_elf accept a file, and so libdwfl take the
// binary's own DWARF rather than look for a separate debug file.
bool HasDwarfSections(Elf* elf) {
  for (std::string_view name : {".debug_info", ".debug_line", ".debug_frame", ".zdebug_info",
                                ".zdebug_line", ".zdebug_frame"}) {
    if (HasContents(elf, name)) return true;
  }
  return false;
}

// Every DWARF section but .debug_frame shown as SHT_NOBITS (in the private
// mapping only), so dwarf_begin_elf neither reads nor inflates them.
void HideAllButDebugFrame(Elf* elf) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == nullptr) continue;
    const std::string_view section(name);
    if (!section.starts_with(".debug_") && !section.starts_with(".zdebug_")) continue;
    if (section == kDebugFrame[0] || section == kDebugFrame[1]) continue;
    shdr.sh_type = SHT_NOBITS;
    gelf_update_shdr(scn, &shdr);  // on failure the section is merely read
  }
}

// Where the row of `cfi` holding `vaddr` ends, if an FDE covers it.
std::optional<uint64_t> RowEnd(Dwarf_CFI* cfi, uint64_t vaddr) {
  const std::optional<CfiRange> row = CfiRowRange(cfi, vaddr);
  return row ? std::optional<uint64_t>(row->end) : std::nullopt;
}

// The true start of the row [start, end) that libdw gave for `vaddr`.
// libdw's end is exact (the next location the FDE advances to), but after
// DW_CFA_restore_state its start is where the restored state was
// remembered, rows earlier (gcc's epilogues in the middle of a function:
// seen on fixture_prog's main). The row starts at the first address whose
// row ends at `end`: every address before it has a row ending at or before
// the true start. One lookup when libdw's start is right, else a binary
// search.
uint64_t RowStart(Dwarf_CFI* cfi, uint64_t start, uint64_t end, uint64_t vaddr) {
  if (start == vaddr || RowEnd(cfi, start) == end) return start;
  uint64_t low = start + 1;  // the row holds `high`; not `low - 1`
  uint64_t high = vaddr;
  while (low < high) {
    const uint64_t middle = low + (high - low) / 2;
    if (RowEnd(cfi, middle) == end) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return high;
}

// The row of `cfi` holding `vaddr`, or nullopt when no FDE covers it.
std::optional<CfiRow> ReadRow(Dwarf_CFI* cfi, uint64_t vaddr) {
  Dwarf_Frame* frame = nullptr;
  if (cfi == nullptr || dwarf_cfi_addrframe(cfi, vaddr, &frame) != 0) return std::nullopt;
  const std::unique_ptr<Dwarf_Frame, decltype(&free)> owned(frame, &free);  // malloc'd by libdw
  CfiRow row;
  Dwarf_Addr start = 0, end = 0;
  bool signal_frame = false;
  dwarf_frame_info(frame, &start, &end, &signal_frame);
  if (start <= vaddr && vaddr < end) {
    row.start = RowStart(cfi, start, end, vaddr);
    row.end = end;
  } else {  // never seen: then the row is known to hold only the address itself
    row.start = vaddr;
    row.end = vaddr + 1;
  }
  row.rule = ReadX86FrameRule(frame);
  return row;
}

}  // namespace

struct CfiRows::State {
  State(ElfFile file, std::string binary, std::string debug)
      : binary(std::move(file)), binary_path(std::move(binary)), debug_path(std::move(debug)) {}
  ~State() {
    if (debug_dwarf != nullptr) dwarf_end(debug_dwarf);  // before its ElfFile goes
    if (eh_cfi != nullptr) dwarf_cfi_end(eh_cfi);        // before the binary's
  }
  void OpenDebugFrame();

  ElfFile binary;
  std::string binary_path;
  std::string debug_path;
  bool x86_64 = false;
  Dwarf_CFI* eh_cfi = nullptr;  // dwarf_getcfi_elf of the binary
  bool debug_tried = false;
  std::string debug_refused;         // why the .debug_frame file was refused, if it was
  std::optional<ElfFile> debug_elf;  // the file whose .debug_frame is read
  Dwarf* debug_dwarf = nullptr;
  Dwarf_CFI* debug_cfi = nullptr;  // owned by debug_dwarf
};

void CfiRows::State::OpenDebugFrame() {
  debug_tried = true;
  const std::string& path =
      HasDwarfSections(binary.get()) || debug_path.empty() ? binary_path : debug_path;
  auto file = ElfFile::Open(path, /*private_copy=*/true);
  if (!file ||
      !(HasContents(file->get(), kDebugFrame[0]) || HasContents(file->get(), kDebugFrame[1]))) {
    return;  // no .debug_frame: as libdwfl, no rows from it
  }
  // A zlib bomb (judged on this private mapping, which dwarf_begin_elf
  // reads, its header pages frozen) gives no rows: its .debug_frame may be
  // the bomb, and the file lies about its sizes.
  struct stat st {};
  if (fstat(file->fd(), &st) != 0) return;
  if (auto checked = CheckCompressedSections(file->get(), static_cast<uint64_t>(st.st_size), path,
                                             /*freeze=*/true);
      !checked) {
    debug_refused = checked.error().message;
    return;
  }
  HideAllButDebugFrame(file->get());
  debug_elf.emplace(std::move(*file));
  debug_dwarf = dwarf_begin_elf(debug_elf->get(), DWARF_C_READ, nullptr);
  if (debug_dwarf != nullptr) debug_cfi = dwarf_getcfi(debug_dwarf);
}

Result<CfiRows> CfiRows::Open(const std::string& binary_path, const std::string& debug_path) {
  TRY_ASSIGN(auto file, ElfFile::Open(binary_path));
  auto state = std::make_unique<State>(std::move(file), binary_path, debug_path);
  state->x86_64 = state->binary.ehdr().e_machine == EM_X86_64;
  if (state->x86_64) state->eh_cfi = dwarf_getcfi_elf(state->binary.get());
  return CfiRows(std::move(state));
}

CfiRows::CfiRows(std::unique_ptr<State> state) : state_(std::move(state)) {}
CfiRows::CfiRows(CfiRows&&) noexcept = default;
CfiRows& CfiRows::operator=(CfiRows&&) noexcept = default;
CfiRows::~CfiRows() = default;

std::optional<CfiRow> CfiRows::RowAt(uint64_t vaddr, CfiSource* source) {
  if (!state_->x86_64) return std::nullopt;
  if (auto row = ReadRow(state_->eh_cfi, vaddr)) {
    if (source != nullptr) *source = CfiSource::kEhFrame;
    return row;
  }
  if (!state_->debug_tried) state_->OpenDebugFrame();
  auto row = ReadRow(state_->debug_cfi, vaddr);
  if (row && source != nullptr) *source = CfiSource::kDebugFrame;
  return row;
}

const ElfFile& CfiRows::binary() const { return state_->binary; }

const std::string& CfiRows::debug_refused() const { return state_->debug_refused; }

}  // namespace sample
