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

// A pc-value table: each step's value for its size in bytes from the
// entry on (values start at -1 and change by zig-zag coded deltas), then
// the end.
void PutPcSteps(Bytes& out, const std::vector<std::pair<int32_t, uint64_t>>& steps) {
  int32_t value = -1;
  for (const auto& [next, size] : steps) {
    const int32_t delta = next - value;
    value = next;
    out.PutVarint(static_cast<uint32_t>((delta << 1) ^ (delta >> 31)));
    out.PutVarint(static_cast<uint32_t>(size));
  }
  out.data().push_back(std::byte{0});
}

void PutPcValue(Bytes& out, int32_t value, uint64_t size) { PutPcSteps(out, {{value, size}}); }

}  // namespace

namespace {

// The table; with `module`, the inline trees into its funcdata and the
// offsets of the table's parts into its data (the moduledata's words).
std::vector<std::byte> BuildTable(GoTableLayout layout,
                                  const std::vector<GoTableFunction>& functions,
                                  uint64_t text_start, bool text_in_header,
                                  std::vector<uint64_t>* parts, Bytes* funcdata) {
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
  std::vector<uint32_t> name_offsets, inlined_name_offsets;
  for (const GoTableFunction& f : functions) {
    name_offsets.push_back(static_cast<uint32_t>(out.size() - (go12 ? 0 : names)));
    out.PutText(f.name);
  }
  for (const GoTableFunction& f : functions) {
    inlined_name_offsets.push_back(static_cast<uint32_t>(out.size() - (go12 ? 0 : names)));
    if (f.inlined) out.PutText(f.inlined->name);
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
  out.data().push_back(std::byte{0});  // offset 0: no table
  struct Tables {
    uint32_t pcfile = 0, pcln = 0, inline_index = 0, tree = UINT32_MAX;
  };
  std::vector<Tables> tables;
  for (const GoTableFunction& f : functions) {
    Tables& t = tables.emplace_back();
    const uint64_t size = f.end - f.start;
    t.pcfile = static_cast<uint32_t>(out.size() - (go12 ? 0 : pctab));
    PutPcValue(out, static_cast<int32_t>(file_index[f.file]), size);
    t.pcln = static_cast<uint32_t>(out.size() - (go12 ? 0 : pctab));
    if (!f.inlined || funcdata == nullptr) {
      PutPcValue(out, static_cast<int32_t>(f.line), size);
      continue;
    }
    const auto inlined = static_cast<int32_t>(f.inlined->size);
    PutPcSteps(out, {{static_cast<int32_t>(f.inlined->line), inlined},
                     {static_cast<int32_t>(f.line), size - inlined}});
    t.inline_index = static_cast<uint32_t>(out.size() - pctab);
    PutPcSteps(out, {{0, inlined}, {-1, size - inlined}});
    // The tree: one call, whose site is the first pc after it.
    t.tree = static_cast<uint32_t>(funcdata->size());
    const uint32_t name = inlined_name_offsets[&f - functions.data()];
    if (layout == GoTableLayout::kGo120) {
      funcdata->Put(uint32_t{0});  // funcID, pad
      funcdata->Put(name);
      funcdata->Put(static_cast<uint32_t>(inlined));  // parentPc
      funcdata->Put(f.inlined->line);                 // startLine
    } else {
      funcdata->Put(uint16_t{0xffff});  // parent: none
      funcdata->Put(uint16_t{0});       // funcID, pad
      funcdata->Put(uint32_t{0});       // file
      funcdata->Put(f.line);            // line of the call site
      funcdata->Put(name);
      funcdata->Put(static_cast<uint32_t>(inlined));  // parentPc
    }
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
      out.Put(tables[i].pcfile);
      out.Put(tables[i].pcln);
      const bool tree = tables[i].tree != UINT32_MAX;
      out.Put(uint32_t{tree ? 3u : 0u});                                // npcdata
      if (!go12) out.Put(uint32_t{0});                                  // cuOffset
      if (layout == GoTableLayout::kGo120) out.Put(functions[i].line);  // startLine
      out.Put(uint32_t{tree ? 4u << 24 : 0u});  // funcID, flag, pad, nfuncdata
      if (tree) {
        // PCDATA_InlTreeIndex is 2; FUNCDATA_InlTree 3 (^0: none).
        for (const uint32_t pcdata : {0u, 0u, tables[i].inline_index}) out.Put(pcdata);
        for (const uint32_t data : {UINT32_MAX, UINT32_MAX, UINT32_MAX, tables[i].tree}) {
          out.Put(data);
        }
      }
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
  if (parts != nullptr) *parts = {names, cutab, filetab, pctab, functab};
  return std::move(out.data());
}

}  // namespace

std::vector<std::byte> BuildGoPclntab(GoTableLayout layout,
                                      const std::vector<GoTableFunction>& functions,
                                      uint64_t text_start, bool text_in_header) {
  return BuildTable(layout, functions, text_start, text_in_header, nullptr, nullptr);
}

GoModule BuildGoModule(GoTableLayout layout, const std::vector<GoTableFunction>& functions,
                       uint64_t text_start, uint64_t table_address, uint64_t gofunc) {
  GoModule module;
  Bytes funcdata;
  std::vector<uint64_t> parts;
  module.pclntab = BuildTable(layout, functions, text_start, true, &parts, &funcdata);
  module.funcdata = std::move(funcdata.data());
  module.gofunc = gofunc;
  // Other data, then a word that looks like the start of a moduledata but
  // is not, then the moduledata (runtime/symtab.go): pcHeader, six slices
  // (funcnametab, cutab, filetab, pctab, pclntable, ftab), ...,
  // rodata, gofunc (word 38 in 1.18-1.19, 40 from 1.20 on).
  Bytes data;
  for (uint64_t word = 0; word < 5; ++word) data.Put(word * 0x1111);
  data.Put(table_address);
  data.Put(uint64_t{0});
  const size_t gofunc_word = layout == GoTableLayout::kGo120 ? 40 : 38;
  std::vector<uint64_t> words(gofunc_word + 8, 0);
  words[0] = table_address;
  const uint64_t slices[] = {parts[0], parts[1], parts[2], parts[3], parts[4], parts[4]};
  for (size_t i = 0; i < 6; ++i) {
    words[1 + 3 * i] = table_address + slices[i];
    words[2 + 3 * i] = words[3 + 3 * i] = 0x100;  // length, capacity
  }
  words[20] = text_start;
  words[gofunc_word - 1] = gofunc - 0x1000;  // rodata
  words[gofunc_word] = gofunc;
  for (const uint64_t word : words) data.Put(word);
  module.data = std::move(data.data());
  return module;
}

}  // namespace sample::testing
