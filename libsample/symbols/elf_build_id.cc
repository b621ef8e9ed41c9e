#include "libsample/symbols/elf_build_id.h"

#include <elf.h>
#include <gelf.h>

#include <cstring>
#include <optional>
#include <span>

#include "libsample/string_parts.h"

namespace sample {
namespace {

// Go's linker writes its build ID (the hashes of the build's inputs and
// output, "actionID/contentID") as a note of its own, not NT_GNU_BUILD_ID,
// its owner "Go" padded with NULs to 4 bytes (n_namesz 4).
constexpr char kGoNoteOwner[] = "Go\0";
constexpr uint32_t kGoBuildIdNote = 4;

// The note `type` of `owner` in one block of notes as hex, if there is one.
std::optional<std::string> NoteInNotes(Elf_Data* data, const char* owner, size_t owner_size,
                                       uint32_t type) {
  if (data == nullptr || data->d_buf == nullptr) return std::nullopt;
  const auto* base = static_cast<const unsigned char*>(data->d_buf);
  GElf_Nhdr nhdr;
  size_t name_offset = 0;
  size_t desc_offset = 0;
  size_t offset = 0;
  while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
    if (nhdr.n_type == type && nhdr.n_namesz == owner_size &&
        std::memcmp(base + name_offset, owner, owner_size) == 0) {
      return HexBytes(std::as_bytes(std::span(base + desc_offset, nhdr.n_descsz)));
    }
  }
  return std::nullopt;
}

// The NT_GNU_BUILD_ID in one block of notes, if there is one.
std::optional<std::string> BuildIdInNotes(Elf_Data* data) {
  return NoteInNotes(data, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU), NT_GNU_BUILD_ID);
}

// Looks in the SHT_NOTE sections; a file without any (section headers
// stripped, or never written) is searched through its PT_NOTE segments.
std::string FindBuildId(Elf* elf) {
  bool saw_note_section = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    saw_note_section = true;
    if (auto id = BuildIdInNotes(elf_getdata(scn, nullptr))) return *id;
  }
  if (saw_note_section) return "";
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return "";
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_NOTE) {
      continue;
    }
    // Notes aligned to 8 use the 8-byte-padded layout (gABI); libelf needs
    // the matching type to walk them.
    const Elf_Type type = phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
    if (auto id = BuildIdInNotes(
            elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, type))) {
      return *id;
    }
  }
  return "";
}

}  // namespace

Result<std::string> ReadElfBuildId(const std::string& path) {
  TRY_ASSIGN(auto file, ElfFile::Open(path));
  return FindBuildId(file.get());
}

std::string ReadElfBuildId(const ElfFile& file) { return FindBuildId(file.get()); }

std::string ReadGoBuildId(const ElfFile& file) {
  Elf* elf = file.get();
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    if (auto id = NoteInNotes(elf_getdata(scn, nullptr), kGoNoteOwner, sizeof(kGoNoteOwner),
                              kGoBuildIdNote)) {
      return *id;
    }
  }
  return "";
}

}  // namespace sample
