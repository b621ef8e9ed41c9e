#include "libsample/symbols/dwarf_unit_table.h"

#include <dwarf.h>

#include <algorithm>
#include <bit>

#include "libsample/byte_reader.h"

namespace sample {
namespace {

// Reads integers of the file's byte order.
class DwarfReader {
 public:
  DwarfReader(std::span<const std::byte> data, bool big_endian)
      : bytes_(data), swap_(big_endian != (std::endian::native == std::endian::big)) {}

  template <typename T>
  bool Read(T* out) {
    if (!bytes_.Read(out)) return false;
    if (swap_) *out = Swap(*out);
    return true;
  }
  // An address or offset of `size` bytes (4 or 8).
  bool ReadSized(uint8_t size, uint64_t* out) {
    if (size == 8) return Read(out);
    uint32_t value = 0;
    if (size != 4 || !Read(&value)) return false;
    *out = value;
    return true;
  }
  // An initial length: its value and the size of the offsets it implies
  // (8 after the 0xffffffff escape of 64-bit DWARF, else 4).
  bool ReadLength(uint64_t* length, uint8_t* offset_size) {
    uint32_t first = 0;
    if (!Read(&first)) return false;
    if (first < 0xfffffff0u) {
      *length = first;
      *offset_size = 4;
      return true;
    }
    *offset_size = 8;
    return first == 0xffffffffu && Read(length);
  }
  bool Skip(size_t size) { return bytes_.Skip(size); }
  // LEB128 of at most 10 bytes (no value of ours needs more than 64 bits).
  bool ReadUleb(uint64_t* out) {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
      uint8_t byte = 0;
      if (!bytes_.Read(&byte)) return false;
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) {
        *out = value;
        return true;
      }
    }
    return false;
  }
  bool Seek(size_t position) { return bytes_.Seek(position); }
  size_t position() const { return bytes_.position(); }

 private:
  template <typename T>
  static T Swap(T value) {
    T out = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      out = static_cast<T>((out << 8) | ((value >> (8 * i)) & 0xff));
    }
    return out;
  }

  ByteReader bytes_;
  bool swap_;
};

}  // namespace

std::vector<DwarfUnitHeader> ParseUnitHeaders(std::span<const std::byte> debug_info,
                                              bool big_endian) {
  std::vector<DwarfUnitHeader> units;
  DwarfReader reader(debug_info, big_endian);
  while (reader.position() < debug_info.size()) {
    DwarfUnitHeader unit;
    unit.offset = reader.position();
    uint64_t length = 0;
    uint8_t offset_size = 0;
    if (!reader.ReadLength(&length, &offset_size)) break;
    const uint64_t start = reader.position();
    // A unit longer than the section is cut at its end, as libdw does.
    const uint64_t end = start + std::min<uint64_t>(length, debug_info.size() - start);
    if (!reader.Read(&unit.version) || unit.version < 2 || unit.version > 5) break;
    size_t rest = 0;  // header bytes after the abbreviation offset
    if (unit.version >= 5) {
      if (!reader.Read(&unit.unit_type)) break;
      uint8_t address_size = 0;
      if (!reader.Read(&address_size) || !reader.ReadSized(offset_size, &unit.abbrev_offset)) break;
      if (unit.unit_type == DW_UT_skeleton || unit.unit_type == DW_UT_split_compile) {
        rest = 8;  // dwo_id
      } else if (unit.unit_type == DW_UT_type || unit.unit_type == DW_UT_split_type) {
        rest = 8 + offset_size;  // type signature and offset
      }
    } else {
      if (!reader.ReadSized(offset_size, &unit.abbrev_offset)) break;
      rest = 1;  // address size
    }
    if (!reader.Skip(rest)) break;
    // A unit with no DIE after its header is left out: the offset past it
    // would be the next unit's header.
    if (reader.position() < end) {
      unit.die_offset = reader.position();
      units.push_back(unit);
    }
    if (!reader.Seek(end)) break;
  }
  return units;
}

UnitTopDies::UnitTopDies(std::span<const std::byte> debug_info,
                         std::span<const std::byte> debug_abbrev)
    : info_(debug_info),
      abbrev_(debug_abbrev),
      budget_(std::max<uint64_t>(uint64_t{4} * debug_abbrev.size(), uint64_t{1} << 20)) {}

std::optional<UnitTopDie> UnitTopDies::Of(const DwarfUnitHeader& unit) {
  // LEB128 reads no byte order; any reader will do.
  DwarfReader info(info_, false);
  uint64_t code = 0;
  if (!info.Seek(unit.die_offset) || !info.ReadUleb(&code) || code == 0) return std::nullopt;
  auto [it, added] = tables_.try_emplace(unit.abbrev_offset);
  Table& table = it->second;
  if (added) table.next = unit.abbrev_offset;
  if (auto found = table.by_code.find(code); found != table.by_code.end()) return found->second;
  DwarfReader abbrev(abbrev_, false);
  while (!table.ended) {
    const uint64_t from = table.next;
    uint64_t entry = 0;
    UnitTopDie top;
    uint8_t children = 0;
    bool read = abbrev.Seek(from) && abbrev.ReadUleb(&entry) && entry != 0 &&
                abbrev.ReadUleb(&top.tag) && abbrev.Read(&children);
    while (read) {
      uint64_t attribute = 0;
      uint64_t form = 0;
      read = abbrev.ReadUleb(&attribute) && abbrev.ReadUleb(&form);
      if (!read || (attribute == 0 && form == 0)) break;
      // A signed LEB128, skipped as an unsigned one (the same bytes end it).
      uint64_t constant = 0;
      if (form == DW_FORM_implicit_const) read = abbrev.ReadUleb(&constant);
      top.has_code = top.has_code || attribute == DW_AT_low_pc || attribute == DW_AT_ranges;
    }
    // The table's end (code 0), a malformed entry, or the budget spent.
    const uint64_t spent = abbrev.position() - from;
    if (!read || spent > budget_) {
      table.ended = true;
      budget_ = spent > budget_ ? 0 : budget_ - spent;
      break;
    }
    budget_ -= spent;
    table.next = abbrev.position();
    table.by_code.try_emplace(entry, top);
    if (entry == code) return top;
  }
  return std::nullopt;
}

std::optional<std::vector<UnitAddressRange>> ParseDebugAranges(std::span<const std::byte> aranges,
                                                               bool big_endian) {
  std::vector<UnitAddressRange> ranges;
  DwarfReader reader(aranges, big_endian);
  while (reader.position() < aranges.size()) {
    const uint64_t set_start = reader.position();
    uint64_t length = 0;
    uint8_t offset_size = 0;
    if (!reader.ReadLength(&length, &offset_size)) return std::nullopt;
    if (length > aranges.size() - reader.position()) return std::nullopt;
    const uint64_t end = reader.position() + length;
    uint16_t version = 0;
    uint64_t unit_offset = 0;
    uint8_t address_size = 0;
    uint8_t segment_size = 0;
    if (!reader.Read(&version) || version != 2 || !reader.ReadSized(offset_size, &unit_offset) ||
        !reader.Read(&address_size) || !reader.Read(&segment_size)) {
      return std::nullopt;
    }
    if ((address_size != 4 && address_size != 8) || segment_size != 0) return std::nullopt;
    // Tuples are aligned to twice the address size from the set's start.
    const uint64_t tuple = 2 * address_size;
    const uint64_t header = reader.position() - set_start;
    if (!reader.Seek(set_start + (header + tuple - 1) / tuple * tuple)) return std::nullopt;
    while (reader.position() + tuple <= end) {
      uint64_t address = 0;
      uint64_t size = 0;
      if (!reader.ReadSized(address_size, &address) || !reader.ReadSized(address_size, &size)) {
        return std::nullopt;
      }
      if (address == 0 && size == 0) break;
      if (size != 0 && address + size > address) {
        ranges.push_back(UnitAddressRange{unit_offset, address, address + size});
      }
    }
    if (reader.position() > end || !reader.Seek(end)) return std::nullopt;
  }
  return ranges;
}

}  // namespace sample
