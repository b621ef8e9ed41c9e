#include "tests/unit/go_pclntab_builder.h"

#include <cstring>
#include <map>

namespace sample::testing {
namespace {

class Bytes {
 public:
  template <typename T>
  void Put(T value) {
    const size_t at = data_.size();
    data_.resize(at + sizeof(T));
    std::memcpy(data_.data() + at, &value, sizeof(T));
  }
  template <typename T>
  void PutAt(size_t at, T value) {
    std::memcpy(data_.data() + at, &value, sizeof(T));
  }
  void PutText(const std::string& text) {
    for (char c : text) data_.push_back(static_cast<std::byte>(c));
    data_.push_back(std::byte{0});
  }
  void PutVarint(uint32_t value) {
    while (value >= 0x80) {
      data_.push_back(static_cast<std::byte>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    data_.push_back(static_cast<std::byte>(value));
  }
  size_t size() const { return data_.size(); }
  std::vector<std::byte>& data() { return data_; }

 private:
  std::vector<std::byte> data_;
};

// A pc-value table: `value` for `size` bytes from the entry (values start
// at -1: the first delta is value + 1, zig-zag coded), then the end.
void PutPcValue(Bytes& out, int32_t value, uint64_t size) {
  const int32_t delta = value + 1;
  out.PutVarint(static_cast<uint32_t>((delta << 1) ^ (delta >> 31)));
  out.PutVarint(static_cast<uint32_t>(size));
  out.data().push_back(std::byte{0});
}

}  // namespace

std::vector<std::byte> BuildGoPclntab(GoTableLayout layout,
                                      const std::vector<GoTableFunction>& functions,
                                      uint64_t text_start, bool text_in_header) {
  const bool go12 = layout == GoTableLayout::kGo12;
  const bool relative = layout == GoTableLayout::kGo118 || layout == GoTableLayout::kGo120;
  const uint32_t magic = go12                              ? 0xfffffffb
                         : layout == GoTableLayout::kGo116 ? 0xfffffffa
                         : layout == GoTableLayout::kGo118 ? 0xfffffff0
                                                           : 0xfffffff1;
  std::map<std::string, uint32_t> file_index;  // 1.2: from 1 (filetab[0] is the count)
  for (const GoTableFunction& f : functions) {
    file_index.emplace(f.file, static_cast<uint32_t>(file_index.size() + (go12 ? 1 : 0)));
  }
  Bytes out;
  out.Put(magic);
  out.Put(uint16_t{0});
  out.Put(uint8_t{1});  // minLC
  out.Put(uint8_t{8});  // ptrSize
  out.Put(uint64_t{functions.size()});
  size_t fields = 0;  // where the offsets go (1.16+)
  if (!go12) {
    out.Put(uint64_t{file_index.size()});
    if (relative) out.Put(text_in_header ? text_start : 0);
    fields = out.size();
    for (int i = 0; i < 5; ++i) out.Put(uint64_t{0});
  }
  // 1.2: the function table follows the header; its offsets count from the
  // table's start, as do names, pc tables and files.
  size_t functab = out.size();
  if (go12) {
    for (size_t i = 0; i <= functions.size(); ++i) out.Put(uint64_t{0}), out.Put(uint64_t{0});
    out.Put(uint32_t{0});  // filetab offset
  }
  const size_t names = out.size();
  std::vector<uint32_t> name_offsets;
  for (const GoTableFunction& f : functions) {
    name_offsets.push_back(static_cast<uint32_t>(out.size() - (go12 ? 0 : names)));
    out.PutText(f.name);
  }
  // Files: 1.16+ a CU table of offsets into the file names; 1.2 a table of
  // offsets from the start.
  const size_t cutab = out.size();
  if (go12) out.Put(static_cast<uint32_t>(file_index.size() + 1));
  for (size_t i = 0; i < file_index.size(); ++i) out.Put(uint32_t{0});
  const size_t filetab = out.size();
  for (const auto& [file, index] : file_index) {
    const size_t slot = cutab + 4 * index;
    out.PutAt(slot, static_cast<uint32_t>(go12 ? out.size() : out.size() - filetab));
    out.PutText(file);
  }
  const size_t pctab = out.size();
  out.data().push_back(std::byte{0});                 // offset 0: no table
  std::vector<std::pair<uint32_t, uint32_t>> tables;  // pcfile, pcln
  for (const GoTableFunction& f : functions) {
    const auto pcfile = static_cast<uint32_t>(out.size() - (go12 ? 0 : pctab));
    PutPcValue(out, static_cast<int32_t>(file_index[f.file]), f.end - f.start);
    const auto pcln = static_cast<uint32_t>(out.size() - (go12 ? 0 : pctab));
    PutPcValue(out, static_cast<int32_t>(f.line), f.end - f.start);
    tables.emplace_back(pcfile, pcln);
  }
  while (out.size() % 8 != 0) out.data().push_back(std::byte{0});
  if (!go12) functab = out.size();
  const size_t entry_size = relative ? 8 : 16;
  if (!go12) out.data().resize(out.size() + (functions.size() + 1) * entry_size);
  const uint64_t end = functions.empty() ? text_start : functions.back().end;
  for (size_t i = 0; i <= functions.size(); ++i) {
    const uint64_t pc = i < functions.size() ? functions[i].start : end;
    uint64_t func = 0;
    if (i < functions.size()) {
      func = out.size() - (go12 ? 0 : functab);
      if (relative) {
        out.Put(static_cast<uint32_t>(functions[i].start - text_start));
      } else {
        out.Put(functions[i].start);
      }
      out.Put(name_offsets[i]);
      out.Put(uint32_t{0});  // args
      out.Put(uint32_t{0});  // deferreturn
      out.Put(uint32_t{0});  // pcsp
      out.Put(tables[i].first);
      out.Put(tables[i].second);
      out.Put(uint32_t{0});                                             // npcdata
      if (!go12) out.Put(uint32_t{0});                                  // cuOffset
      if (layout == GoTableLayout::kGo120) out.Put(functions[i].line);  // startLine
      out.Put(uint32_t{0});  // funcID, flag, pad, nfuncdata
    }
    const size_t slot = functab + i * entry_size;
    if (relative) {
      out.PutAt(slot, static_cast<uint32_t>(pc - text_start));
      out.PutAt(slot + 4, static_cast<uint32_t>(func));
    } else if (i < functions.size() || !go12) {
      out.PutAt(slot, pc);
      out.PutAt(slot + 8, func);
    } else {
      out.PutAt(slot, pc);  // 1.2: the end pc alone
    }
  }
  if (go12) out.PutAt(functab + functions.size() * 16 + 8, static_cast<uint32_t>(cutab));
  if (!go12) {
    const uint64_t offsets[] = {names, cutab, filetab, pctab, functab};
    for (int i = 0; i < 5; ++i) out.PutAt(fields + 8 * i, offsets[i]);
  }
  return std::move(out.data());
}

}  // namespace sample::testing
