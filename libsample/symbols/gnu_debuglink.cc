#include "libsample/symbols/gnu_debuglink.h"

#include <gelf.h>

#include <array>

#include "libsample/byte_reader.h"
#include "libsample/crc32.h"
#include "libsample/mapped_file.h"
#include "libsample/symbols/elf_file.h"

namespace sample {

std::optional<GnuDebugLink> ReadGnuDebugLink(Elf* elf) {
  Elf_Scn* scn = FindElfSection(elf, ".gnu_debuglink");
  Elf_Data* data = scn != nullptr ? elf_rawdata(scn, nullptr) : nullptr;
  if (data == nullptr || data->d_buf == nullptr) return std::nullopt;
  ByteReader reader(
      std::span<const std::byte>(static_cast<const std::byte*>(data->d_buf), data->d_size));
  // The name, NUL-terminated, padded to a multiple of 4, then the CRC in the
  // file's byte order.
  std::string_view name;
  if (!reader.ReadString(reader.remaining(), &name) || name.empty()) return std::nullopt;
  const size_t crc_offset = (name.size() + 1 + 3) & ~size_t{3};
  ByteReader crc_reader(
      std::span<const std::byte>(static_cast<const std::byte*>(data->d_buf), data->d_size));
  std::array<uint8_t, 4> crc_bytes{};
  if (!crc_reader.Skip(crc_offset) || !crc_reader.Read(&crc_bytes)) return std::nullopt;
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) return std::nullopt;
  const bool big_endian = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
  uint32_t crc = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t byte = crc_bytes[static_cast<size_t>(big_endian ? i : 3 - i)];
    crc = crc << 8 | byte;
  }
  return GnuDebugLink{std::string(name), crc};
}

Result<uint32_t> DebugLinkFileCrc(const std::string& path) {
  TRY_ASSIGN(auto file, MappedFile::Open(path));
  return Crc32(file.bytes());
}

}  // namespace sample
