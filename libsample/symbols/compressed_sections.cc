#include "libsample/symbols/compressed_sections.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace sample {
namespace {

// GNU's header of a .zdebug_* section: "ZLIB", then the inflated size as
// 8 big-endian bytes (what libelf's elf_compress_gnu reads).
constexpr size_t kGnuHeaderBytes = 12;

// Copies the private mapping's pages holding `bytes` (writing each page's
// byte back), so that they no longer follow the file.
void Freeze(void* bytes, size_t size) {
  if (bytes == nullptr || size == 0) return;
  auto* first = static_cast<volatile unsigned char*>(bytes);
  volatile unsigned char* last = first + size - 1;
  *first = *first;
  *last = *last;
}

void Add(uint64_t& sum, uint64_t value) { sum += std::min(value, UINT64_MAX - sum); }

// The size a .zdebug_* section claims, or nullopt when its header is not
// there.
std::optional<uint64_t> GnuClaim(Elf_Scn* scn, bool freeze) {
  Elf_Data* raw = elf_rawdata(scn, nullptr);
  if (raw == nullptr || raw->d_buf == nullptr || raw->d_size < kGnuHeaderBytes) return std::nullopt;
  if (freeze) Freeze(raw->d_buf, kGnuHeaderBytes);
  const auto* bytes = static_cast<const unsigned char*>(raw->d_buf);
  if (std::memcmp(bytes, "ZLIB", 4) != 0) return std::nullopt;
  uint64_t size = 0;
  for (size_t i = 4; i < kGnuHeaderBytes; ++i) size = (size << 8) | bytes[i];
  return size;
}

// The size an SHF_COMPRESSED section claims, or nullopt when libelf cannot
// read its Elf*_Chdr.
std::optional<uint64_t> ChdrClaim(Elf_Scn* scn, bool freeze) {
  if (freeze) {
    Elf_Data* raw = elf_rawdata(scn, nullptr);
    if (raw == nullptr) return std::nullopt;
    Freeze(raw->d_buf, std::min(raw->d_size, sizeof(Elf64_Chdr)));
  }
  GElf_Chdr chdr;
  if (gelf_getchdr(scn, &chdr) == nullptr) return std::nullopt;
  return chdr.ch_size;
}

}  // namespace

CompressedSections CountCompressedSections(Elf* elf, bool freeze) {
  CompressedSections c;
  size_t names = 0;
  const bool named = elf_getshdrstrndx(elf, &names) == 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      if (!c.unreadable) c.unreadable_section = elf_ndxscn(scn);
      c.unreadable = true;
      continue;
    }
    if (shdr.sh_type == SHT_NOBITS) continue;  // holds nothing to inflate
    const char* name = named ? elf_strptr(elf, names, shdr.sh_name) : nullptr;
    const bool chdr = (shdr.sh_flags & SHF_COMPRESSED) != 0;
    // libdw takes .zdebug_ names of DWARF sections as GNU-compressed; any
    // such name is counted.
    if (!chdr && (name == nullptr || !std::string_view(name).starts_with(".zdebug"))) continue;
    c.any = true;
    const std::optional<uint64_t> claim = chdr ? ChdrClaim(scn, freeze) : GnuClaim(scn, freeze);
    if (!claim) {
      if (!c.unreadable) c.unreadable_section = elf_ndxscn(scn);
      c.unreadable = true;
      continue;
    }
    Add(c.compressed, shdr.sh_size);
    Add(c.inflated, *claim);
  }
  return c;
}

InflateVerdict JudgeCompression(const CompressedSections& c, uint64_t file_size) {
  if (c.unreadable) return InflateVerdict::kBomb;
  if (!c.any) return InflateVerdict::kNone;
  // kMaxInflateRatio * compressed + slack, saturating: with a sparse file
  // `compressed` may pass 2^57, and a wrapped product would be a small one.
  uint64_t limit = 0;
  if (__builtin_mul_overflow(kMaxInflateRatio, c.compressed, &limit) ||
      __builtin_add_overflow(limit, kInflateSlackBytes, &limit)) {
    limit = UINT64_MAX;
  }
  if (c.compressed > file_size || c.inflated > limit) return InflateVerdict::kBomb;
  // The copy: the file less its compressed bytes, plus what they inflate to.
  uint64_t copy = 0;
  if (__builtin_add_overflow(file_size - c.compressed, c.inflated, &copy)) copy = UINT64_MAX;
  if (file_size > kMaxInflatedDebugBytes || copy > kMaxInflatedDebugBytes) {
    return InflateVerdict::kTooLarge;
  }
  return InflateVerdict::kCache;
}

Result<void> CheckCompressedSections(Elf* elf, uint64_t file_size, const std::string& path,
                                     bool freeze) {
  const CompressedSections c = CountCompressedSections(elf, freeze);
  if (JudgeCompression(c, file_size) != InflateVerdict::kBomb) return {};
  if (c.unreadable) {
    return Fail(fmt::format(
        "{}: DWARF not read: the header of section {} cannot be read (taken for a zlib bomb)", path,
        c.unreadable_section));
  }
  return Fail(fmt::format(
      "{}: DWARF not read: its compressed sections claim {} bytes inflated from {} in a file of {} "
      "(over {}x: a zlib bomb)",
      path, c.inflated, c.compressed, file_size, kMaxInflateRatio));
}

Result<void> CheckCompressedSectionsOfFd(int fd, const std::string& path) {
  elf_version(EV_CURRENT);
  struct stat st {};
  if (fstat(fd, &st) != 0) return Fail(fmt::format("{}: cannot stat", path), errno);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return {};  // not ELF: libdw reads no DWARF from it either
  Result<void> result = elf_kind(elf) == ELF_K_ELF
                            ? CheckCompressedSections(elf, static_cast<uint64_t>(st.st_size), path)
                            : Result<void>{};
  elf_end(elf);
  return result;
}

}  // namespace sample
