// DwarfUnitTable: the units of .debug_info and the address ranges
// .debug_aranges gives them, read from the sections' bytes.
//
// libdw keeps a record of each unit it meets (its header, an abbreviation
// hash, a search-tree node) and meets them in file order: a DIE of unit N,
// dwarf_get_units or dwarf_getaranges records units 0..N (all of them for
// the last two) first. For libc's debug file, 2,063 units, that was 4-5 ms
// of every DWARF open, whichever unit a lookup then wanted (allocations and
// page faults, and as long again in dwarf_end). Read here, the table costs
// a walk over the unit headers, and libdw records units only up to the
// last one a lookup asks for (BinarySymbolizer's unit DIEs, on first use).
//
// Both parsers take the section's bytes in the file's byte order and check
// every read against the end: a malformed .debug_aranges gives nullopt (the
// caller then reads each unit's own ranges, as for a file without one), a
// malformed unit header ends the unit list there (libdw stops there too).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace sample {

struct DwarfUnitHeader {
  uint64_t offset = 0;      // of the header in .debug_info
  uint64_t die_offset = 0;  // of the unit's top DIE (what dwarf_offdie takes)
  uint16_t version = 0;     // 2-5
  uint8_t unit_type = 0;    // DW_UT_* of a version 5 header; 0 before version 5
  uint64_t abbrev_offset = 0;  // of its abbreviation table in .debug_abbrev
};

// The headers of the units of a .debug_info section, in file order.
std::vector<DwarfUnitHeader> ParseUnitHeaders(std::span<const std::byte> debug_info,
                                              bool big_endian);

// What a unit's top DIE is, from its abbreviation alone (no attribute
// value is read): its tag, and whether it has DW_AT_low_pc or DW_AT_ranges,
// without which the unit describes no code (GCC's units of variables only,
// which .debug_aranges leaves out). nullopt if the DIE's abbreviation
// cannot be found or read.
struct UnitTopDie {
  uint64_t tag = 0;
  bool has_code = false;
};
std::optional<UnitTopDie> ReadUnitTopDie(std::span<const std::byte> debug_info,
                                         std::span<const std::byte> debug_abbrev,
                                         const DwarfUnitHeader& unit);

// One address range of .debug_aranges: [lo, hi) is code of the unit whose
// header is at `unit_offset` in .debug_info. Empty ranges are left out.
struct UnitAddressRange {
  uint64_t unit_offset = 0;
  uint64_t lo = 0;
  uint64_t hi = 0;
};

// The ranges of a .debug_aranges section (version 2 sets, 4- or 8-byte
// addresses, no segment selectors); nullopt if any set is malformed.
std::optional<std::vector<UnitAddressRange>> ParseDebugAranges(std::span<const std::byte> aranges,
                                                               bool big_endian);

}  // namespace sample
