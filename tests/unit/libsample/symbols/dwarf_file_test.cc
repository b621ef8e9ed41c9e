// DwarfFile opens a file's DWARF with libdw, leaving compressed the
// sections no reader of ours looks at (dwarf_begin_elf would inflate them
// all at once).
#include "libsample/symbols/dwarf_file.h"

#include <dwarf.h>
#include <gelf.h>

#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "libsample/symbols/elf_file.h"

namespace sample {
namespace {

// The section header `name` of `elf`, as libelf holds it.
std::optional<GElf_Shdr> SectionHeader(Elf* elf, const std::string& name) {
  Elf_Scn* scn = FindElfSection(elf, name);
  GElf_Shdr shdr;
  if (scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr) return std::nullopt;
  return shdr;
}

TEST(DwarfFileTest, UnreadSectionsOfACompressedDebugFileStayCompressed) {
  const std::string path = FIXTURE_PROG_DEBUG_GZ_PATH;
  // The fixture as written: location lists (too small for objcopy to
  // compress them; libc's are 0.6 MB compressed) and compressed .debug_info.
  auto file = ElfFile::Open(path);
  ASSERT_TRUE(file) << file.error().message;
  const auto loclists = SectionHeader(file->get(), ".debug_loclists");
  ASSERT_TRUE(loclists) << "the -O1 fixture has location lists";
  const auto compressed_info = SectionHeader(file->get(), ".debug_info");
  ASSERT_TRUE(compressed_info);
  ASSERT_NE(compressed_info->sh_flags & SHF_COMPRESSED, 0u);
  ASSERT_EQ(loclists->sh_type, static_cast<GElf_Word>(SHT_PROGBITS));

  auto dwarf = DwarfFile::Open(path);
  ASSERT_TRUE(dwarf) << dwarf.error().message;
  Elf* elf = dwarf_getelf(dwarf->get());
  // Shown to libdw as holding nothing, so never inflated ...
  const auto hidden = SectionHeader(elf, ".debug_loclists");
  ASSERT_TRUE(hidden);
  EXPECT_EQ(hidden->sh_type, static_cast<GElf_Word>(SHT_NOBITS));
  // ... while what the symbolizer reads is there: a unit and its DIE.
  const auto info = SectionHeader(elf, ".debug_info");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->sh_type, static_cast<GElf_Word>(SHT_PROGBITS));
  Dwarf_Off next = 0;
  size_t header_size = 0;
  ASSERT_EQ(dwarf_nextcu(dwarf->get(), 0, &next, &header_size, nullptr, nullptr, nullptr), 0);
  Dwarf_Die die;
  ASSERT_NE(dwarf_offdie(dwarf->get(), header_size, &die), nullptr);
  EXPECT_EQ(dwarf_tag(&die), DW_TAG_compile_unit);

  // The file itself is unchanged (a private mapping was edited).
  auto again = ElfFile::Open(path);
  ASSERT_TRUE(again);
  const auto on_disk = SectionHeader(again->get(), ".debug_loclists");
  ASSERT_TRUE(on_disk);
  EXPECT_EQ(on_disk->sh_type, static_cast<GElf_Word>(SHT_PROGBITS));
}

}  // namespace
}  // namespace sample
