// The unit headers, .debug_aranges and top-DIE abbreviations read from
// section bytes: synthetic sections (both byte orders, 64-bit DWARF, every
// malformation stopping or refusing as documented), and the binaries the
// tests build, read by libdw too, which must agree.
#include "libsample/symbols/dwarf_unit_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/dwarf_unit_index.h"  // IsDiscardedRange
#include "libsample/symbols/elf_file.h"

namespace sample {
namespace {

// Little- or big-endian section bytes, written field by field.
class Bytes {
 public:
  explicit Bytes(bool big_endian = false) : big_(big_endian) {}
  Bytes& U8(uint8_t v) { return Put(v, 1); }
  Bytes& U16(uint16_t v) { return Put(v, 2); }
  Bytes& U32(uint32_t v) { return Put(v, 4); }
  Bytes& U64(uint64_t v) { return Put(v, 8); }
  Bytes& Uleb(uint64_t v) {
    do {
      uint8_t byte = v & 0x7f;
      v >>= 7;
      bytes_.push_back(static_cast<std::byte>(byte | (v != 0 ? 0x80 : 0)));
    } while (v != 0);
    return *this;
  }
  Bytes& Zeros(size_t n) { return Put(0, n); }
  size_t size() const { return bytes_.size(); }
  // Writes `v` over `size` bytes at `at` (a length patched in later).
  void Patch(size_t at, uint64_t v, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      const size_t shift = 8 * (big_ ? size - 1 - i : i);
      bytes_[at + i] = static_cast<std::byte>((v >> shift) & 0xff);
    }
  }
  std::span<const std::byte> span() const { return bytes_; }

 private:
  Bytes& Put(uint64_t v, size_t size) {
    bytes_.resize(bytes_.size() + size);
    Patch(bytes_.size() - size, v, size);
    return *this;
  }
  bool big_;
  std::vector<std::byte> bytes_;
};

// A unit of `body` bytes of DIEs after its header.
void AddUnit(Bytes& info, uint16_t version, uint8_t unit_type, uint64_t abbrev_offset,
             size_t body, bool dwarf64 = false) {
  const size_t start = info.size();
  if (dwarf64) info.U32(0xffffffff).U64(0);
  else info.U32(0);
  info.U16(version);
  const auto offset = [&](uint64_t v) { dwarf64 ? info.U64(v) : info.U32(static_cast<uint32_t>(v)); };
  if (version >= 5) {
    info.U8(unit_type).U8(8);
    offset(abbrev_offset);
    if (unit_type == DW_UT_skeleton || unit_type == DW_UT_split_compile) info.U64(0x1234);
    if (unit_type == DW_UT_type || unit_type == DW_UT_split_type) {
      info.U64(0x5678);
      offset(0);
    }
  } else {
    offset(abbrev_offset);
    info.U8(8);
  }
  info.Zeros(body);
  const size_t length_size = dwarf64 ? 12 : 4;
  if (dwarf64) info.Patch(start + 4, info.size() - start - length_size, 8);
  else info.Patch(start, info.size() - start - length_size, 4);
}

TEST(DwarfUnitTableTest, UnitHeadersOfEveryVersionAndSize) {
  for (const bool big : {false, true}) {
    SCOPED_TRACE(big ? "big-endian" : "little-endian");
    Bytes info(big);
    AddUnit(info, 4, 0, 0x10, 5);                           // header 11 bytes
    AddUnit(info, 5, DW_UT_compile, 0x20, 3);               // 12
    AddUnit(info, 5, DW_UT_type, 0x30, 2);                  // 24
    AddUnit(info, 5, DW_UT_skeleton, 0x40, 1);              // 20
    AddUnit(info, 5, DW_UT_compile, 0x50, 4, /*dwarf64=*/true);  // 24
    AddUnit(info, 2, 0, 0x60, 1, /*dwarf64=*/true);         // 23
    const auto units = ParseUnitHeaders(info.span(), big);
    ASSERT_EQ(units.size(), 6u);
    const uint64_t sizes[] = {11 + 5, 12 + 3, 24 + 2, 20 + 1, 24 + 4, 23 + 1};
    const uint64_t headers[] = {11, 12, 24, 20, 24, 23};
    const uint8_t types[] = {0, DW_UT_compile, DW_UT_type, DW_UT_skeleton, DW_UT_compile, 0};
    uint64_t at = 0;
    for (size_t i = 0; i < units.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(units[i].offset, at);
      EXPECT_EQ(units[i].die_offset, at + headers[i]);
      EXPECT_EQ(units[i].unit_type, types[i]);
      EXPECT_EQ(units[i].abbrev_offset, 0x10u * (i + 1));
      at += sizes[i];
    }
    EXPECT_EQ(units[0].version, 4);
    EXPECT_EQ(units[5].version, 2);
  }
}

TEST(DwarfUnitTableTest, MalformedUnitHeaders) {
  Bytes good;
  AddUnit(good, 5, DW_UT_compile, 0, 3);
  {
    Bytes info = good;  // a length past the section's end: cut there, as libdw does
    info.U32(100).U16(5).U8(DW_UT_compile).U8(8).U32(0).Zeros(2);
    const auto units = ParseUnitHeaders(info.span(), false);
    ASSERT_EQ(units.size(), 2u);
    EXPECT_EQ(units[1].die_offset, good.size() + 12);
  }
  {
    Bytes info = good;  // version 6 ends the list
    AddUnit(info, 6, DW_UT_compile, 0, 3);
    AddUnit(info, 5, DW_UT_compile, 0, 3);
    EXPECT_EQ(ParseUnitHeaders(info.span(), false).size(), 1u);
  }
  {
    Bytes info = good;  // a reserved initial length ends it
    info.U32(0xfffffff5).Zeros(20);
    EXPECT_EQ(ParseUnitHeaders(info.span(), false).size(), 1u);
  }
  {
    // A unit shorter than its own header, and one whose header fills it
    // (no DIE: the offset after it is the next unit's header), are left
    // out; the units after them are read.
    Bytes info = good;
    info.U32(3).U16(5).U8(DW_UT_compile);
    AddUnit(info, 5, DW_UT_compile, 0, 0);
    AddUnit(info, 4, 0, 0x40, 2);
    const auto units = ParseUnitHeaders(info.span(), false);
    ASSERT_EQ(units.size(), 2u);
    EXPECT_EQ(units[1].abbrev_offset, 0x40u);
    EXPECT_EQ(units[1].version, 4);
  }
  EXPECT_TRUE(ParseUnitHeaders({}, false).empty());
}

// One .debug_aranges set: its header, padding to twice the address size,
// tuples, and the (0, 0) terminator.
void AddSet(Bytes& aranges, uint64_t unit, uint8_t address_size,
            const std::vector<std::pair<uint64_t, uint64_t>>& tuples, uint16_t version = 2,
            uint8_t segment_size = 0) {
  const size_t start = aranges.size();
  aranges.U32(0).U16(version).U32(static_cast<uint32_t>(unit)).U8(address_size).U8(segment_size);
  while ((aranges.size() - start) % (2 * address_size) != 0) aranges.U8(0);
  const auto address = [&](uint64_t v) {
    address_size == 8 ? aranges.U64(v) : aranges.U32(static_cast<uint32_t>(v));
  };
  for (const auto& [lo, size] : tuples) {
    address(lo);
    address(size);
  }
  address(0);
  address(0);
  aranges.Patch(start, aranges.size() - start - 4, 4);
}

TEST(DwarfUnitTableTest, ArangesSetsOfBothAddressSizesAndByteOrders) {
  for (const bool big : {false, true}) {
    SCOPED_TRACE(big ? "big-endian" : "little-endian");
    Bytes aranges(big);
    AddSet(aranges, 0x0, 8, {{0x1000, 0x40}, {0x2000, 0}, {0x3000, 0x10}});
    AddSet(aranges, 0x80, 4, {{0x4000, 0x20}});
    const auto ranges = ParseDebugAranges(aranges.span(), big);
    ASSERT_TRUE(ranges);
    ASSERT_EQ(ranges->size(), 3u);  // the empty range is left out
    EXPECT_EQ((*ranges)[0].unit_offset, 0u);
    EXPECT_EQ((*ranges)[0].lo, 0x1000u);
    EXPECT_EQ((*ranges)[0].hi, 0x1040u);
    EXPECT_EQ((*ranges)[1].lo, 0x3000u);
    EXPECT_EQ((*ranges)[1].hi, 0x3010u);
    EXPECT_EQ((*ranges)[2].unit_offset, 0x80u);
    EXPECT_EQ((*ranges)[2].lo, 0x4000u);
    EXPECT_EQ((*ranges)[2].hi, 0x4020u);
  }
  EXPECT_TRUE(ParseDebugAranges({}, false));  // no section: no ranges
}

TEST(DwarfUnitTableTest, MalformedArangesAreRefusedWhole) {
  const auto refused = [](const Bytes& aranges) {
    return !ParseDebugAranges(aranges.span(), false).has_value();
  };
  Bytes version3;
  AddSet(version3, 0, 8, {{0x1000, 0x10}});
  AddSet(version3, 0, 8, {{0x1000, 0x10}}, 3);
  EXPECT_TRUE(refused(version3));
  Bytes segments;
  AddSet(segments, 0, 8, {{0x1000, 0x10}}, 2, 8);
  EXPECT_TRUE(refused(segments));
  Bytes odd_address;
  AddSet(odd_address, 0, 2, {{0x10, 0x10}});
  EXPECT_TRUE(refused(odd_address));
  Bytes past_end;
  AddSet(past_end, 0, 8, {{0x1000, 0x10}});
  past_end.Patch(0, 1000, 4);
  EXPECT_TRUE(refused(past_end));
  Bytes cut;  // a set cut inside its header
  cut.U32(2).U16(2);
  EXPECT_TRUE(refused(cut));
}

TEST(DwarfUnitTableTest, TopDieFromItsAbbreviation) {
  Bytes abbrev;
  // Table at 0: code 1 a variable (not the top DIE), code 2 a unit with
  // code, code 3 a unit without, whose attribute list has an implicit
  // constant.
  abbrev.Uleb(1).Uleb(DW_TAG_variable).U8(0).Uleb(DW_AT_name).Uleb(DW_FORM_string).Uleb(0).Uleb(0);
  abbrev.Uleb(2).Uleb(DW_TAG_compile_unit).U8(1);
  abbrev.Uleb(DW_AT_name).Uleb(DW_FORM_strp).Uleb(DW_AT_low_pc).Uleb(DW_FORM_addr);
  abbrev.Uleb(0).Uleb(0);
  abbrev.Uleb(3).Uleb(DW_TAG_compile_unit).U8(1);
  abbrev.Uleb(DW_AT_language).Uleb(DW_FORM_implicit_const).Uleb(0x1c);
  abbrev.Uleb(DW_AT_stmt_list).Uleb(DW_FORM_sec_offset).Uleb(0).Uleb(0);
  abbrev.Uleb(0);
  const size_t second_table = abbrev.size();
  abbrev.Uleb(200).Uleb(DW_TAG_partial_unit).U8(1).Uleb(DW_AT_ranges).Uleb(DW_FORM_sec_offset);
  abbrev.Uleb(0).Uleb(0).Uleb(0);

  Bytes info;
  const auto unit_with_code = [&](uint64_t code, uint64_t table) {
    Bytes one;
    AddUnit(one, 5, DW_UT_compile, table, 0);
    one.Uleb(code);
    one.Patch(0, one.size() - 4, 4);  // the unit holds the code
    return one;
  };
  for (const auto& [code, table, tag, has_code] :
       {std::tuple{2u, uint64_t{0}, DW_TAG_compile_unit, true},
        std::tuple{3u, uint64_t{0}, DW_TAG_compile_unit, false},
        std::tuple{200u, uint64_t{second_table}, DW_TAG_partial_unit, true}}) {
    SCOPED_TRACE(code);
    const Bytes one = unit_with_code(code, table);
    const auto units = ParseUnitHeaders(one.span(), false);
    ASSERT_EQ(units.size(), 1u);
    const auto top = UnitTopDies(one.span(), abbrev.span()).Of(units[0]);
    ASSERT_TRUE(top);
    EXPECT_EQ(top->tag, static_cast<uint64_t>(tag));
    EXPECT_EQ(top->has_code, has_code);
  }
  // A code the table lacks, a null top DIE, a table offset past the end.
  for (const auto& [code, table] : {std::pair{7u, uint64_t{0}}, std::pair{0u, uint64_t{0}},
                                    std::pair{2u, uint64_t{abbrev.size() + 1}}}) {
    const Bytes one = unit_with_code(code, table);
    const auto units = ParseUnitHeaders(one.span(), false);
    ASSERT_EQ(units.size(), 1u);
    EXPECT_FALSE(UnitTopDies(one.span(), abbrev.span()).Of(units[0])) << code;
  }
  // A table cut in the middle of an entry.
  const Bytes one = unit_with_code(3, 0);
  const auto units = ParseUnitHeaders(one.span(), false);
  EXPECT_FALSE(UnitTopDies(one.span(), abbrev.span().first(12)).Of(units[0]));
}

// Units sharing one table are answered from one reading of it; units
// pointing into it at many offsets (a crafted file) stop being answered
// once the budget (here 1 MiB) is read, instead of each reading on to the
// table's end.
TEST(DwarfUnitTableTest, TopDiesReadEachTableOnceWithinABudget) {
  Bytes abbrev;
  std::vector<uint64_t> entry_offsets;
  for (uint64_t code = 1; code <= 3000; ++code) {
    entry_offsets.push_back(abbrev.size());
    abbrev.Uleb(code).Uleb(code == 2000 ? DW_TAG_compile_unit : DW_TAG_partial_unit).U8(1);
    abbrev.Uleb(DW_AT_name).Uleb(DW_FORM_strp).Uleb(0).Uleb(0);
  }
  abbrev.Uleb(0);
  // A second table: one unit with code.
  const uint64_t second = abbrev.size();
  abbrev.Uleb(1).Uleb(DW_TAG_compile_unit).U8(1).Uleb(DW_AT_low_pc).Uleb(DW_FORM_addr);
  abbrev.Uleb(0).Uleb(0).Uleb(0);
  const auto unit = [](uint64_t code, uint64_t table) {
    Bytes one;
    AddUnit(one, 5, DW_UT_compile, table, 0);
    one.Uleb(code);
    one.Patch(0, one.size() - 4, 4);  // the unit holds the code
    return one;
  };
  const auto header_of = [](const Bytes& one) { return ParseUnitHeaders(one.span(), false).at(0); };
  const Bytes compile = unit(2000, 0);
  const Bytes with_code = unit(1, second);
  {
    UnitTopDies tops(compile.span(), abbrev.span());
    for (int i = 0; i < 3; ++i) {
      const auto top = tops.Of(header_of(compile));
      ASSERT_TRUE(top);
      EXPECT_EQ(top->tag, static_cast<uint64_t>(DW_TAG_compile_unit));
      EXPECT_FALSE(top->has_code);
    }
    const auto top = UnitTopDies(with_code.span(), abbrev.span()).Of(header_of(with_code));
    ASSERT_TRUE(top);
    EXPECT_TRUE(top->has_code);
  }
  // 3,000 units, each at its own offset into the first table, each asking
  // for a code it lacks: read to the end each time, 36 MB.
  Bytes info;
  for (const uint64_t at : entry_offsets) {
    const Bytes one = unit(9999, at);
    for (const std::byte b : one.span()) info.U8(static_cast<uint8_t>(b));
  }
  const size_t crafted = info.size();
  for (const std::byte b : with_code.span()) info.U8(static_cast<uint8_t>(b));
  const auto headers = ParseUnitHeaders(info.span(), false);
  ASSERT_EQ(headers.size(), entry_offsets.size() + 1);
  EXPECT_EQ(headers.back().offset, crafted);
  UnitTopDies tops(info.span(), abbrev.span());
  for (size_t i = 0; i + 1 < headers.size(); ++i) EXPECT_FALSE(tops.Of(headers[i]));
  // The budget is spent: the second table is no longer read.
  EXPECT_FALSE(tops.Of(headers.back()));
}

// libdw's view of one file's units and aranges against ours.
void ExpectAgreesWithLibdw(const std::string& path) {
  SCOPED_TRACE(path);
  const int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  Dwarf* dw = dwarf_begin(fd, DWARF_C_READ);
  ASSERT_NE(dw, nullptr) << dwarf_errmsg(-1);
  Elf* elf = dwarf_getelf(dw);
  const auto bytes = [elf](const char* name) -> std::span<const std::byte> {
    Elf_Scn* scn = FindElfSection(elf, name);
    Elf_Data* data = scn != nullptr ? elf_getdata(scn, nullptr) : nullptr;
    if (data == nullptr || data->d_buf == nullptr) return {};
    return {static_cast<const std::byte*>(data->d_buf), data->d_size};
  };
  const auto units = ParseUnitHeaders(bytes(".debug_info"), false);
  std::vector<uint64_t> ours;
  for (const DwarfUnitHeader& unit : units) ours.push_back(unit.die_offset);
  std::vector<uint64_t> theirs;
  Dwarf_CU* cu = nullptr;
  Dwarf_Die cu_die;
  Dwarf_Die sub_die;
  uint8_t unit_type = 0;
  while (dwarf_get_units(dw, cu, &cu, nullptr, &unit_type, &cu_die, &sub_die) == 0) {
    theirs.push_back(dwarf_dieoffset(&cu_die));
  }
  EXPECT_EQ(ours, theirs);
  EXPECT_FALSE(ours.empty());

  std::set<std::tuple<uint64_t, uint64_t, uint64_t>> our_ranges;
  const auto aranges = ParseDebugAranges(bytes(".debug_aranges"), false);
  ASSERT_TRUE(aranges);
  for (const UnitAddressRange& range : *aranges) {
    uint64_t die = 0;
    for (const DwarfUnitHeader& unit : units) {
      if (unit.offset == range.unit_offset) die = unit.die_offset;
    }
    our_ranges.emplace(range.lo, range.hi, die);
  }
  std::set<std::tuple<uint64_t, uint64_t, uint64_t>> their_ranges;
  Dwarf_Aranges* list = nullptr;
  size_t count = 0;
  if (dwarf_getaranges(dw, &list, &count) == 0) {
    for (size_t i = 0; i < count; ++i) {
      Dwarf_Addr start = 0;
      Dwarf_Word length = 0;
      Dwarf_Off offset = 0;
      dwarf_getarangeinfo(dwarf_onearange(list, i), &start, &length, &offset);
      if (length != 0) their_ranges.emplace(start, start + length, offset);
    }
  }
  EXPECT_EQ(our_ranges, their_ranges);
  // Every unit's top DIE as libdw reads it: its tag, and whether it has
  // DW_AT_low_pc or DW_AT_ranges.
  UnitTopDies tops(bytes(".debug_info"), bytes(".debug_abbrev"));
  for (const DwarfUnitHeader& unit : units) {
    Dwarf_Die die;
    ASSERT_NE(dwarf_offdie(dw, unit.die_offset, &die), nullptr);
    const auto top = tops.Of(unit);
    ASSERT_TRUE(top) << unit.offset;
    EXPECT_EQ(top->tag, static_cast<uint64_t>(dwarf_tag(&die)));
    EXPECT_EQ(top->has_code, dwarf_hasattr(&die, DW_AT_low_pc) || dwarf_hasattr(&die, DW_AT_ranges));
  }
  dwarf_end(dw);
  close(fd);
}

TEST(DwarfUnitTableTest, AgreesWithLibdwOnTheTestBinaries) {
  // C at -O2, C++ with inlining, and this test binary (GCC and libstdc++
  // templates: a thousand units, ranges claimed by many).
  for (const char* path : {FIXTURE_SYMBOLIZER_PATH, FIXTURE_INLINE_CXX_PATH, "/proc/self/exe"}) {
    ExpectAgreesWithLibdw(path);
  }
}

// bfd points each discarded COMDAT copy's .debug_aranges entry at the copy
// it kept, so several units claim one function; the first unit in
// .debug_info, whose copy the linker kept, answers (as addr2line does).
TEST(DwarfUnitTableTest, RangeClaimedByManyUnitsIsTheFirstUnits) {
  auto elf = ElfFile::Open("/proc/self/exe");
  ASSERT_TRUE(elf);
  auto symbolizer = BinarySymbolizer::Open("/proc/self/exe");
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  ASSERT_EQ(symbolizer->dwarf_error(), "");
  ASSERT_GT(symbolizer->unit_count(), 100u);
  // The raw view of the sections, through a DWARF open of our own.
  const int fd = open("/proc/self/exe", O_RDONLY);
  Dwarf* dw = dwarf_begin(fd, DWARF_C_READ);
  ASSERT_NE(dw, nullptr);
  Elf_Scn* scn = FindElfSection(dwarf_getelf(dw), ".debug_aranges");
  Elf_Data* data = scn != nullptr ? elf_getdata(scn, nullptr) : nullptr;
  ASSERT_NE(data, nullptr);
  const auto aranges = ParseDebugAranges(
      std::span(static_cast<const std::byte*>(data->d_buf), data->d_size), false);
  ASSERT_TRUE(aranges);
  // A range claimed by more than one unit, and its first claimant's ranges.
  std::map<std::pair<uint64_t, uint64_t>, std::set<uint64_t>> claims;
  for (const UnitAddressRange& range : *aranges) {
    claims[{range.lo, range.hi}].insert(range.unit_offset);
  }
  size_t checked = 0;
  for (const auto& [range, units] : claims) {
    if (units.size() < 2 || IsDiscardedRange(range.first) || checked == 20) continue;
    std::vector<std::pair<uint64_t, uint64_t>> first;
    for (const UnitAddressRange& r : *aranges) {
      if (r.unit_offset == *units.begin() && !IsDiscardedRange(r.lo)) first.emplace_back(r.lo, r.hi);
    }
    std::sort(first.begin(), first.end());
    auto got = symbolizer->UnitRangesAt(range.first);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, first) << std::hex << range.first;
    ++checked;
  }
  dwarf_end(dw);
  close(fd);
  if (checked == 0) GTEST_SKIP() << "no range of this build is claimed by two units";
}

}  // namespace
}  // namespace sample
