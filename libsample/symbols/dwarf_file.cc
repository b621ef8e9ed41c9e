#include "libsample/symbols/dwarf_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <string_view>

#include <fmt/format.h>

#include "libsample/symbols/compressed_sections.h"

namespace sample {
namespace {

// Sections no reader of ours looks at: variables' locations, macros and
// name indexes. dwarf_begin_elf inflates every compressed .debug_* section
// it is shown, at once (elfutils 0.188), and for Debian's libc these are a
// sixth of its debug file's inflating time; shown as SHT_NOBITS (in the
// private mapping only) they are skipped.
constexpr std::string_view kUnreadSections[] = {
    ".debug_loc",         ".debug_loclists",    ".debug_macro",   ".debug_macinfo",
    ".debug_pubnames",    ".debug_pubtypes",    ".debug_gnu_pubnames", ".debug_gnu_pubtypes",
    ".zdebug_loc",        ".zdebug_loclists",   ".zdebug_macro",  ".zdebug_macinfo",
};

void HideUnreadSections(Elf* elf) {
  for (std::string_view name : kUnreadSections) {
    Elf_Scn* scn = FindElfSection(elf, name);
    GElf_Shdr shdr;
    if (scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr) continue;
    shdr.sh_type = SHT_NOBITS;
    gelf_update_shdr(scn, &shdr);  // on failure the section is merely inflated
  }
}

}  // namespace

Result<DwarfFile> DwarfFile::Open(const std::string& path) {
  TRY_ASSIGN(auto elf, ElfFile::Open(path, /*private_copy=*/true));
  // The claims judged on the mapping dwarf_begin_elf reads (its pages
  // frozen), before anything is inflated: a zlib bomb gives no DWARF.
  struct stat st {};
  if (fstat(elf.fd(), &st) != 0) return Fail(fmt::format("{}: cannot stat", path), errno);
  TRY(CheckCompressedSections(elf.get(), static_cast<uint64_t>(st.st_size), path,
                              /*freeze=*/true));
  HideUnreadSections(elf.get());
  // Checked first so that "no DWARF" is told apart from a broken file:
  // dwarf_begin_elf also fails on a file whose .debug_info was stripped.
  if (!HasDebugInfo(elf.get())) return Fail(fmt::format("{}: no DWARF", path));
  Dwarf* dwarf = dwarf_begin_elf(elf.get(), DWARF_C_READ, nullptr);
  if (dwarf == nullptr)
    return Fail(fmt::format("{}: cannot read DWARF: {}", path, dwarf_errmsg(-1)));
  return DwarfFile(std::move(elf), dwarf);
}

DwarfFile::~DwarfFile() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
}

}  // namespace sample
