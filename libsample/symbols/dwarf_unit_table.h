// The DWARF unit table: the units of .debug_info, the address ranges
// .debug_aranges gives them and what their top DIEs are, read from the
// sections' bytes.
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
// Every reader takes the sections' bytes in the file's byte order and
// checks each read against the end: a malformed .debug_aranges gives
// nullopt (the caller then reads each unit's own ranges, as for a file
// without one); a unit longer than .debug_info is cut at its end (as libdw
// does), a unit without room for a DIE is left out, and a header that
// cannot be read ends the unit list.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
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
// which .debug_aranges leaves out).
struct UnitTopDie {
  uint64_t tag = 0;
  bool has_code = false;
};

// UnitTopDie of the units of one .debug_info, each abbreviation table read
// once however many units share it, and as far as their codes need. At most
// 4 times the section's bytes (and 1 MiB) are read in all: past that (a
// crafted file's units pointing into one long table at many offsets) the
// answer is nullopt, as it is for a code that cannot be found or read.
class UnitTopDies {
 public:
  UnitTopDies(std::span<const std::byte> debug_info, std::span<const std::byte> debug_abbrev);
  std::optional<UnitTopDie> Of(const DwarfUnitHeader& unit);

 private:
  struct Table {
    std::unordered_map<uint64_t, UnitTopDie> by_code;
    uint64_t next = 0;  // where reading goes on
    bool ended = false;
  };
  std::span<const std::byte> info_;
  std::span<const std::byte> abbrev_;
  uint64_t budget_;
  std::unordered_map<uint64_t, Table> tables_;  // by offset
};

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
