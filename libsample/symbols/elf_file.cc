#include "libsample/symbols/elf_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "libsample/regular_file.h"

namespace sample {
namespace {

// libelf must be told the ELF version once per process before any other
// call; elf_version itself is not safe to race.
void InitLibelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

}  // namespace

Result<ElfFile> ElfFile::Open(const std::string& path, bool private_copy) {
  InitLibelf();
  // Paths come from recordings: a FIFO there would block, a device never
  // end; only a regular file is opened.
  TRY_ASSIGN(UniqueFd fd, OpenRegularFile(path));
  Elf* elf =
      elf_begin(fd.get(), private_copy ? ELF_C_READ_MMAP_PRIVATE : ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return Fail(fmt::format("{}: {}", path, elf_errmsg(-1)));
  ElfFile file(std::move(fd), elf);
  if (elf_kind(elf) != ELF_K_ELF) return Fail(fmt::format("{}: not an ELF file", path));
  if (gelf_getehdr(elf, &file.ehdr_) == nullptr) {
    return Fail(fmt::format("{}: bad ELF header: {}", path, elf_errmsg(-1)));
  }
  return file;
}

ElfFile::ElfFile(ElfFile&& other) noexcept
    : fd_(std::move(other.fd_)), elf_(std::exchange(other.elf_, nullptr)), ehdr_(other.ehdr_) {}

ElfFile::~ElfFile() {
  if (elf_ != nullptr) elf_end(elf_);
}

Elf_Scn* FindElfSectionOfType(Elf* elf, Elf64_Word type) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) != nullptr && shdr.sh_type == type) return scn;
  }
  return nullptr;
}

Elf_Scn* FindElfSection(Elf* elf, std::string_view name) {
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* section_name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (section_name != nullptr && name == section_name) return scn;
  }
  return nullptr;
}

bool HasDebugInfo(Elf* elf) {
  for (std::string_view name : {".debug_info", ".zdebug_info"}) {
    Elf_Scn* scn = FindElfSection(elf, name);
    GElf_Shdr shdr;
    if (scn != nullptr && gelf_getshdr(scn, &shdr) != nullptr && shdr.sh_type != SHT_NOBITS &&
        shdr.sh_size > 0) {
      return true;
    }
  }
  return false;
}

Result<ElfLoadLayout> ReadElfLoadLayout(const std::string& path) {
  TRY_ASSIGN(auto file, ElfFile::Open(path));
  ElfLoadLayout layout;
  layout.fixed_address = file.ehdr().e_type == ET_EXEC;
  size_t count = 0;
  if (elf_getphdrnum(file.get(), &count) != 0) {
    return Fail(fmt::format("{}: unreadable program headers: {}", path, elf_errmsg(-1)));
  }
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(file.get(), static_cast<int>(i), &phdr) == nullptr ||
        phdr.p_type != PT_LOAD) {
      continue;
    }
    layout.segments.push_back(
        {phdr.p_offset, phdr.p_filesz, phdr.p_vaddr, (phdr.p_flags & PF_X) != 0});
  }
  return layout;
}

std::optional<uint64_t> ElfLoadLayout::BiasOf(uint64_t start, uint64_t pgoff) const {
  if (fixed_address) return 0;
  // The mapping starts on a page boundary at or below its segment's
  // p_offset. Linkers that pack segments (lld, mold) put the executable one
  // in the same page as the one before it, so an executable mapping's
  // offset can fall in a read-only segment's range too: prefer PF_X.
  constexpr uint64_t kPage = 4096;
  const Segment* any = nullptr;
  for (const Segment& segment : segments) {
    const uint64_t first_page = segment.offset & ~(kPage - 1);
    if (pgoff < first_page || pgoff >= segment.offset + segment.filesz) continue;
    if (segment.executable) {
      any = &segment;
      break;
    }
    if (any == nullptr) any = &segment;
  }
  if (any == nullptr) return std::nullopt;
  // File offset X of the segment is at runtime bias + p_vaddr + (X - p_offset).
  return start - (any->vaddr + pgoff - any->offset);
}

Result<uint64_t> ElfLoadBias(const std::string& path, uint64_t start, uint64_t pgoff) {
  TRY_ASSIGN(auto layout, ReadElfLoadLayout(path));
  const std::optional<uint64_t> bias = layout.BiasOf(start, pgoff);
  if (!bias) return Fail(fmt::format("{}: no loadable segment holds file offset {:#x}", path, pgoff));
  return *bias;
}

}  // namespace sample
