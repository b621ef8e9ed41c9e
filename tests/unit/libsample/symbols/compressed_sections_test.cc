// The zlib-bomb check every file passes before libdw's DWARF reader sees
// it (issue 56 item 5, the review's bypasses): a GNU .zdebug_ bomb, a
// compressed section whose header cannot be read beside a real bomb, and a
// -gz binary's own bomb handed to DwarfFile::Open, each refused with the
// file named; the same for CfiRows' .debug_frame file and the fd libdwfl
// is given; the judgement's arithmetic at sizes only a sparse file reaches;
// a header rewritten in place after the judgement is not what libdw reads.
#include "libsample/symbols/compressed_sections.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libsample/regular_file.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/cfi_rows.h"
#include "libsample/symbols/dwarf_file.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/inflated_debug.h"
#include "libsample/unique_fd.h"
#include "tests/unit/temp_dir.h"

namespace sample {
namespace {

using ::testing::HasSubstr;

constexpr size_t kBombBytes = size_t{64} << 20;  // ~64 KB compressed

enum class Packing { kNone, kChdr, kGnu };

struct Section {
  std::string name;
  size_t zeros = 0;  // its contents: this many zero bytes
  Packing packing = Packing::kNone;
  Elf64_Word type = SHT_PROGBITS;
  Elf64_Xword flags = 0;
};

// An x86_64 ELF file of type `type` holding `sections` (after .shstrtab,
// section 1), each packed as asked: SHF_COMPRESSED (gcc -gz's) or GNU's
// "ZLIB" header (-gz=zlib-gnu, under a .zdebug_ name).
void WriteElf(const std::string& path, Elf64_Half type, const std::vector<Section>& sections) {
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd.valid());
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd.get(), ELF_C_WRITE, nullptr);
  ASSERT_NE(elf, nullptr);
  Elf64_Ehdr* ehdr = elf64_newehdr(elf);
  ehdr->e_ident[EI_DATA] = ELFDATA2LSB;
  ehdr->e_type = type;
  ehdr->e_machine = EM_X86_64;
  ehdr->e_version = EV_CURRENT;
  std::string names(1, '\0');
  std::vector<size_t> name_at;
  for (const Section& section : sections) {
    name_at.push_back(names.size());
    names += section.name + '\0';
  }
  const size_t shstrtab_at = names.size();
  names += std::string(".shstrtab") + '\0';
  Elf_Scn* strtab = elf_newscn(elf);
  Elf_Data* strtab_data = elf_newdata(strtab);
  strtab_data->d_buf = names.data();
  strtab_data->d_size = names.size();
  Elf64_Shdr* strtab_shdr = elf64_getshdr(strtab);
  strtab_shdr->sh_name = static_cast<Elf64_Word>(shstrtab_at);
  strtab_shdr->sh_type = SHT_STRTAB;
  ehdr->e_shstrndx = static_cast<Elf64_Half>(elf_ndxscn(strtab));
  std::vector<std::vector<char>> contents;
  contents.reserve(sections.size());
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& section = sections[i];
    contents.emplace_back(section.zeros);
    Elf_Scn* scn = elf_newscn(elf);
    Elf_Data* data = elf_newdata(scn);
    data->d_buf = contents.back().data();
    data->d_size = contents.back().size();
    Elf64_Shdr* shdr = elf64_getshdr(scn);
    shdr->sh_name = static_cast<Elf64_Word>(name_at[i]);
    shdr->sh_type = section.type;
    shdr->sh_flags = section.flags;
    shdr->sh_addralign = 1;
    if (section.packing == Packing::kChdr) {
      ASSERT_EQ(elf_compress(scn, ELFCOMPRESS_ZLIB, 0), 1) << elf_errmsg(-1);
    } else if (section.packing == Packing::kGnu) {
      ASSERT_EQ(elf_compress_gnu(scn, 1, 0), 1) << elf_errmsg(-1);
    }
  }
  ASSERT_GE(elf_update(elf, ELF_C_WRITE), 0) << elf_errmsg(-1);
  elf_end(elf);
}

// Sets the section header of section `index` of the ELF64 file `path` to
// say SHF_COMPRESSED, in the file's bytes (libelf writes no such section
// whose contents cannot hold a compression header).
void MarkCompressed(const std::string& path, size_t index) {
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  Elf64_Ehdr ehdr;
  ASSERT_EQ(pread(fd.get(), &ehdr, sizeof ehdr, 0), static_cast<ssize_t>(sizeof ehdr));
  Elf64_Shdr shdr;
  const off_t at = static_cast<off_t>(ehdr.e_shoff + index * ehdr.e_shentsize);
  ASSERT_EQ(pread(fd.get(), &shdr, sizeof shdr, at), static_cast<ssize_t>(sizeof shdr));
  shdr.sh_flags |= SHF_COMPRESSED;
  ASSERT_EQ(pwrite(fd.get(), &shdr, sizeof shdr, at), static_cast<ssize_t>(sizeof shdr));
}

CompressedSections Count(const std::string& path) {
  auto file = ElfFile::Open(path);
  EXPECT_TRUE(file) << file.error().message;
  return file ? CountCompressedSections(file->get()) : CompressedSections{};
}

class CompressedSectionsTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }
  testing::TempDir dir_;
};

// GNU-style .zdebug_info claiming 64 MiB in ~64 KB: it was not counted, so
// the file went to libdw "as is", which inflated it.
TEST_F(CompressedSectionsTest, AGnuZdebugBombIsCountedAndRefused) {
  const std::string bomb = Path("zdebug.debug");
  WriteElf(bomb, ET_REL, {{.name = ".zdebug_info", .zeros = kBombBytes, .packing = Packing::kGnu}});
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_LT(std::filesystem::file_size(bomb), size_t{1} << 20);
  const CompressedSections c = Count(bomb);
  EXPECT_TRUE(c.any);
  EXPECT_FALSE(c.unreadable);
  EXPECT_EQ(c.inflated, kBombBytes);
  EXPECT_EQ(JudgeCompression(c, std::filesystem::file_size(bomb)), InflateVerdict::kBomb);
  EXPECT_EQ(InflatedDebugFile(bomb, "00112233445566778899aabbccddeeff00112233"), "");
  auto dwarf = DwarfFile::Open(bomb);
  ASSERT_FALSE(dwarf);
  EXPECT_THAT(dwarf.error().message, HasSubstr(bomb));
  EXPECT_THAT(dwarf.error().message, HasSubstr("claim 67108864 bytes"));
}

// One SHF_COMPRESSED section too small for its Elf64_Chdr beside the real
// bomb: the unreadable header made the verdict "as is", and libdw
// inflated the bomb.
TEST_F(CompressedSectionsTest, AnUnreadableCompressionHeaderBesideABombIsABomb) {
  const std::string bomb = Path("broken.debug");
  WriteElf(bomb, ET_REL,
           {{.name = ".debug_abbrev", .zeros = 4},
            {.name = ".debug_info", .zeros = kBombBytes, .packing = Packing::kChdr}});
  ASSERT_FALSE(HasFatalFailure());
  MarkCompressed(bomb, 2);  // .debug_abbrev: .shstrtab is 1
  ASSERT_FALSE(HasFatalFailure());
  const CompressedSections c = Count(bomb);
  EXPECT_TRUE(c.unreadable);
  EXPECT_EQ(c.unreadable_section, 2u);
  EXPECT_EQ(JudgeCompression(c, std::filesystem::file_size(bomb)), InflateVerdict::kBomb);
  EXPECT_EQ(InflatedDebugFile(bomb, "00112233445566778899aabbccddeeff00112233"), "");
  auto dwarf = DwarfFile::Open(bomb);
  ASSERT_FALSE(dwarf);
  EXPECT_THAT(dwarf.error().message, HasSubstr(bomb + ": DWARF not read: the header of section 2"));
}

// A binary built with -gz holding its own compressed .debug_info bomb:
// only separate debug files were judged, so the recorder (root, -a)
// inflated a user's binary's claim in memory. DwarfFile::Open judges the
// file it opened, whatever path it was given, and the symbolizer keeps
// the ELF symbols and says why there is no DWARF.
TEST_F(CompressedSectionsTest, ABinarysOwnCompressedDwarfIsJudgedBeforeLibdwReadsIt) {
  const std::string binary = Path("gz_binary");
  WriteElf(binary, ET_EXEC,
           {{.name = ".text", .zeros = 64, .flags = SHF_ALLOC | SHF_EXECINSTR},
            {.name = ".debug_info", .zeros = kBombBytes, .packing = Packing::kChdr}});
  ASSERT_FALSE(HasFatalFailure());
  auto dwarf = DwarfFile::Open(binary);
  ASSERT_FALSE(dwarf);
  EXPECT_THAT(dwarf.error().message, HasSubstr(binary + ": DWARF not read"));
  EXPECT_THAT(dwarf.error().message, HasSubstr("zlib bomb"));
  auto symbolizer = BinarySymbolizer::Open(binary, "");
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  EXPECT_THAT(symbolizer->dwarf_error(), HasSubstr("zlib bomb"));
  // The fd libdwfl is given (the DWARF unwinder's modules and debug files).
  auto fd = OpenRegularFile(binary);
  ASSERT_TRUE(fd);
  auto checked = CheckCompressedSectionsOfFd(fd->get(), binary);
  ASSERT_FALSE(checked);
  EXPECT_THAT(checked.error().message, HasSubstr(binary));
}

// CfiRows' .debug_frame file (here the binary itself, which has DWARF
// sections) was handed to dwarf_begin_elf unjudged.
TEST_F(CompressedSectionsTest, CfiRowsReadNoDebugFrameFromABomb) {
  const std::string binary = Path("frame_bomb");
  WriteElf(binary, ET_EXEC,
           {{.name = ".text", .zeros = 64, .flags = SHF_ALLOC | SHF_EXECINSTR},
            {.name = ".debug_frame", .zeros = kBombBytes, .packing = Packing::kChdr}});
  ASSERT_FALSE(HasFatalFailure());
  auto rows = CfiRows::Open(binary, "");
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_FALSE(rows->RowAt(0x10));
  EXPECT_THAT(rows->debug_refused(), HasSubstr(binary + ": DWARF not read"));
}

// Honest files pass: the fixture's -gz debug file, and files without
// compression.
TEST_F(CompressedSectionsTest, HonestFilesPass) {
  for (const std::string path : {FIXTURE_PROG_DEBUG_GZ_PATH, FIXTURE_PROG_DEBUG_PATH}) {
    auto file = ElfFile::Open(path);
    ASSERT_TRUE(file);
    EXPECT_TRUE(CheckCompressedSections(file->get(), std::filesystem::file_size(path), path))
        << path;
    EXPECT_TRUE(DwarfFile::Open(path)) << path;
  }
  EXPECT_TRUE(Count(FIXTURE_PROG_DEBUG_GZ_PATH).any);
  EXPECT_FALSE(Count(FIXTURE_PROG_DEBUG_PATH).any);
}

// kMaxInflateRatio * compressed wrapped for compressed >= 2^57 (a sparse
// file can be that large): the wrapped limit was small, so an honest 8x
// claim was a bomb. A claim past the true limit still is.
TEST(JudgeCompressionTest, TheRatioLimitSaturatesInsteadOfWrapping) {
  const uint64_t compressed = uint64_t{1} << 57;
  EXPECT_EQ(JudgeCompression({.compressed = compressed, .inflated = compressed * 8, .any = true},
                             uint64_t{1} << 58),
            InflateVerdict::kTooLarge);
  // Just below the wrap, 192x is still a bomb.
  EXPECT_EQ(
      JudgeCompression({.compressed = compressed / 2, .inflated = compressed * 96, .any = true},
                       uint64_t{1} << 58),
      InflateVerdict::kBomb);
  // At ordinary sizes: the limit is exact.
  const uint64_t limit = kMaxInflateRatio * 1000 + kInflateSlackBytes;
  EXPECT_EQ(JudgeCompression({.compressed = 1000, .inflated = limit, .any = true}, 4096),
            InflateVerdict::kCache);
  EXPECT_EQ(JudgeCompression({.compressed = 1000, .inflated = limit + 1, .any = true}, 4096),
            InflateVerdict::kBomb);
  EXPECT_EQ(JudgeCompression({}, 4096), InflateVerdict::kNone);
  EXPECT_EQ(JudgeCompression({.unreadable = true}, 4096), InflateVerdict::kBomb);
}

// The judgement reads the private mapping libdw then reads; its header
// pages are copied first, so a rewrite of the file in place afterwards
// (the owner of a binary can) does not reach what libdw inflates.
TEST_F(CompressedSectionsTest, AHeaderRewrittenInPlaceAfterTheJudgementIsNotWhatLibdwReads) {
  const std::string path = Path("honest.debug");
  WriteElf(path, ET_REL, {{.name = ".debug_info", .zeros = 4096, .packing = Packing::kChdr}});
  ASSERT_FALSE(HasFatalFailure());
  for (const bool freeze : {true, false}) {
    auto file = ElfFile::Open(path, /*private_copy=*/true);
    ASSERT_TRUE(file);
    Elf_Scn* scn = FindElfSection(file->get(), ".debug_info");
    ASSERT_NE(scn, nullptr);
    GElf_Shdr shdr;
    ASSERT_NE(gelf_getshdr(scn, &shdr), nullptr);
    EXPECT_EQ(CountCompressedSections(file->get(), freeze).inflated, 4096u);
    // The owner rewrites ch_size in the file, then restores it.
    UniqueFd writer(open(path.c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_TRUE(writer.valid());
    const off_t size_at = static_cast<off_t>(shdr.sh_offset + offsetof(Elf64_Chdr, ch_size));
    for (const uint64_t claim : {uint64_t{1} << 40, uint64_t{4096}}) {
      ASSERT_EQ(pwrite(writer.get(), &claim, sizeof claim, size_at), 8);
      if (claim != 4096) {
        GElf_Chdr chdr;
        ASSERT_NE(gelf_getchdr(scn, &chdr), nullptr);
        // Unfrozen, the mapping follows the file (why freezing is needed).
        EXPECT_EQ(chdr.ch_size, freeze ? 4096u : claim) << "freeze " << freeze;
      }
    }
  }
}

}  // namespace
}  // namespace sample
