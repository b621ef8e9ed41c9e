// Fuzz target: the .gnu_debuglink parser. The input becomes the section's
// contents inside a minimal, valid ELF64 file (built here, either byte
// order), so the fuzzer spends its time on the parser rather than on
// getting past libelf. The result is checked against the layout read
// independently: the name up to the first NUL, the CRC at the next 4-byte
// boundary in the file's byte order. Input: u8 (bit 0: big-endian), then
// the section contents.
#include <elf.h>
#include <libelf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "libsample/symbols/gnu_debuglink.h"
#include "tests/fuzz/fuzz_target.h"

namespace sample {
namespace {

class ElfWriter {
 public:
  explicit ElfWriter(bool big_endian) : big_endian_(big_endian) {}

  template <typename T>
  void Put(T value) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    if (big_endian_) std::reverse(bytes, bytes + sizeof(T));
    out_.insert(out_.end(), bytes, bytes + sizeof(T));
  }
  void PutBytes(const void* data, size_t size) {
    const auto* p = static_cast<const char*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  void Align(size_t to) { out_.resize((out_.size() + to - 1) / to * to); }
  size_t size() const { return out_.size(); }
  std::vector<char>& bytes() { return out_; }

 private:
  bool big_endian_;
  std::vector<char> out_;
};

// ELF64 header, .shstrtab, the section, then three section headers
// (null, .shstrtab, .gnu_debuglink).
std::vector<char> WrapInElf(std::span<const std::byte> section, bool big_endian) {
  static const char kNames[] = "\0.shstrtab\0.gnu_debuglink";
  ElfWriter w(big_endian);
  const unsigned char data = big_endian ? ELFDATA2MSB : ELFDATA2LSB;
  const unsigned char ident[EI_NIDENT] = {ELFMAG0,    ELFMAG1, ELFMAG2,   ELFMAG3,
                                          ELFCLASS64, data,    EV_CURRENT};
  w.PutBytes(ident, sizeof(ident));
  w.Put<uint16_t>(ET_EXEC);
  w.Put<uint16_t>(EM_X86_64);
  w.Put<uint32_t>(EV_CURRENT);
  w.Put<uint64_t>(0);  // e_entry
  w.Put<uint64_t>(0);  // e_phoff
  const size_t shoff_at = w.size();
  w.Put<uint64_t>(0);  // e_shoff, patched below
  w.Put<uint32_t>(0);  // e_flags
  w.Put<uint16_t>(sizeof(Elf64_Ehdr));
  w.Put<uint16_t>(sizeof(Elf64_Phdr));
  w.Put<uint16_t>(0);  // e_phnum
  w.Put<uint16_t>(sizeof(Elf64_Shdr));
  w.Put<uint16_t>(3);  // e_shnum
  w.Put<uint16_t>(1);  // e_shstrndx
  const size_t names_at = w.size();
  w.PutBytes(kNames, sizeof(kNames));
  w.Align(4);
  const size_t section_at = w.size();
  w.PutBytes(section.data(), section.size());
  w.Align(8);
  const uint64_t shoff = w.size();
  auto header = [&](uint32_t name, uint32_t type, uint64_t offset, uint64_t size, uint64_t align) {
    w.Put<uint32_t>(name);
    w.Put<uint32_t>(type);
    w.Put<uint64_t>(0);  // sh_flags
    w.Put<uint64_t>(0);  // sh_addr
    w.Put<uint64_t>(offset);
    w.Put<uint64_t>(size);
    w.Put<uint32_t>(0);  // sh_link
    w.Put<uint32_t>(0);  // sh_info
    w.Put<uint64_t>(align);
    w.Put<uint64_t>(0);  // sh_entsize
  };
  header(0, SHT_NULL, 0, 0, 0);
  header(1, SHT_STRTAB, names_at, sizeof(kNames), 1);
  header(11, SHT_PROGBITS, section_at, section.size(), 4);
  ElfWriter patch(big_endian);
  patch.Put<uint64_t>(shoff);
  std::memcpy(w.bytes().data() + shoff_at, patch.bytes().data(), 8);
  return std::move(w.bytes());
}

}  // namespace
}  // namespace sample

SAMPLE_FUZZ_TARGET(gnu_debuglink)(std::span<const std::byte> input) {
  using namespace sample;
  static const bool initialized = elf_version(EV_CURRENT) != EV_NONE;
  if (!initialized) std::abort();
  fuzz::InputTaker take(input);
  const bool big_endian = (take.Take<uint8_t>() & 1) != 0;
  const std::span<const std::byte> section = take.rest();
  std::vector<char> image = WrapInElf(section, big_endian);
  Elf* elf = elf_memory(image.data(), image.size());
  if (elf == nullptr) std::abort();  // the wrapper is always valid ELF
  const std::optional<GnuDebugLink> link = ReadGnuDebugLink(elf);
  elf_end(elf);

  // The layout, read independently.
  const char* chars = reinterpret_cast<const char*>(section.data());
  const size_t name_size = strnlen(chars, section.size());
  const size_t crc_at = (name_size + 1 + 3) / 4 * 4;
  const bool valid = name_size > 0 && name_size < section.size() && crc_at + 4 <= section.size();
  if (link.has_value() != valid) std::abort();
  if (!valid) return 0;
  uint32_t crc = 0;
  for (int i = 0; i < 4; ++i) {
    const auto byte = static_cast<uint8_t>(section[crc_at + (big_endian ? i : 3 - i)]);
    crc = crc << 8 | byte;
  }
  if (link->file_name != std::string(chars, name_size) || link->crc != crc) std::abort();
  return 0;
}
