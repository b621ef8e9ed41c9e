#include "libsample/symbols/go_pclntab.h"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

namespace sample {
namespace {

constexpr uint32_t kMagic12 = 0xfffffffb;
constexpr uint32_t kMagic116 = 0xfffffffa;
constexpr uint32_t kMagic118 = 0xfffffff0;
constexpr uint32_t kMagic120 = 0xfffffff1;
// A pc-value table's steps are bounded by its function's bytes; this bounds
// a crafted one that never ends.
constexpr uint32_t kMaxSteps = 1 << 20;

}  // namespace

std::optional<uint32_t> GoPclntab::U32(uint64_t offset) const {
  if (offset > bytes_.size() || bytes_.size() - offset < 4) return std::nullopt;
  uint32_t value;
  std::memcpy(&value, bytes_.data() + offset, 4);
  return value;
}

std::optional<uint64_t> GoPclntab::Word(uint64_t offset) const {
  if (ptr_size_ == 4) return U32(offset);
  if (offset > bytes_.size() || bytes_.size() - offset < 8) return std::nullopt;
  uint64_t value;
  std::memcpy(&value, bytes_.data() + offset, 8);
  return value;
}

std::optional<std::string_view> GoPclntab::CString(uint64_t offset) const {
  if (offset >= bytes_.size()) return std::nullopt;
  const std::string_view rest(bytes_.data() + offset, bytes_.size() - offset);
  const size_t end = rest.find('\0');
  if (end == std::string_view::npos || end == 0) return std::nullopt;
  return rest.substr(0, end);
}

Result<GoPclntab> GoPclntab::Parse(std::span<const std::byte> bytes, uint64_t text_start) {
  GoPclntab table;
  table.bytes_.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const auto magic = table.U32(0);
  if (!magic || table.bytes_.size() < 16) return Fail(".gopclntab: too short for its header");
  switch (*magic) {
    case kMagic12:
      table.version_ = Version::k12;
      break;
    case kMagic116:
      table.version_ = Version::k116;
      break;
    case kMagic118:
      table.version_ = Version::k118;
      break;
    case kMagic120:
      table.version_ = Version::k120;
      break;
    default:
      return Fail(fmt::format(".gopclntab: magic {:#x} is no Go version we read", *magic));
  }
  table.quantum_ = static_cast<uint8_t>(table.bytes_[6]);
  table.ptr_size_ = static_cast<uint8_t>(table.bytes_[7]);
  if ((table.ptr_size_ != 4 && table.ptr_size_ != 8) ||
      (table.quantum_ != 1 && table.quantum_ != 2 && table.quantum_ != 4)) {
    return Fail(fmt::format(".gopclntab: pointer size {} and instruction size {} are no Go's",
                            table.ptr_size_, table.quantum_));
  }
  if (!table.ReadFunctions(text_start)) {
    return Fail(".gopclntab: its header points outside the section");
  }
  return table;
}

bool GoPclntab::ReadFunctions(uint64_t text_start) {
  const uint64_t ps = ptr_size_;
  const auto word = [&](uint64_t index) { return Word(8 + index * ps); };
  const auto nfunc = word(0);
  if (!nfunc || *nfunc > bytes_.size() / 8) return false;
  nfunc_ = *nfunc;
  // Where the function table starts and what its offsets count from.
  uint64_t func_base = 0;
  if (version_ == Version::k12) {
    pcln_ = 8 + ps;
    const auto filetab = U32(pcln_ + nfunc_ * 2 * ps + ps);
    if (!filetab) return false;
    filetab_ = *filetab;
  } else {
    // 1.18 added textStart after nfiles.
    const uint64_t first = version_ == Version::k116 ? 2 : 3;
    const auto names = word(first), cutab = word(first + 1), filetab = word(first + 2),
               pctab = word(first + 3), pcln = word(first + 4);
    if (!names || !cutab || !filetab || !pctab || !pcln) return false;
    funcnames_ = *names;
    cutab_ = *cutab;
    filetab_ = *filetab;
    pctab_ = *pctab;
    pcln_ = *pcln;
    func_base = pcln_;
    if (version_ != Version::k116) {
      const auto own_text = word(2);
      if (!own_text) return false;
      if (*own_text != 0) text_start = *own_text;
    }
  }
  const bool relative = version_ == Version::k118 || version_ == Version::k120;
  const uint64_t entry_size = relative ? 8 : 2 * ps;
  const auto entry_at = [&](uint64_t i) -> std::optional<uint64_t> {
    if (!relative) return Word(pcln_ + i * entry_size);
    const auto offset = U32(pcln_ + i * entry_size);
    return offset ? std::optional<uint64_t>(text_start + *offset) : std::nullopt;
  };
  functions_.reserve(nfunc_);
  for (uint64_t i = 0; i < nfunc_; ++i) {
    const auto start = entry_at(i), end = entry_at(i + 1);
    const std::optional<uint64_t> func_offset =
        relative ? std::optional<uint64_t>(U32(pcln_ + i * entry_size + 4))
                 : Word(pcln_ + i * entry_size + ps);
    if (!start || !end || !func_offset) return false;
    const uint64_t func = func_base + *func_offset;
    const auto name_offset = U32(func + (relative ? 4 : ps));
    if (!name_offset || *start >= *end || func > UINT32_MAX) continue;
    const auto name = CString(funcnames_ + static_cast<int32_t>(*name_offset));
    if (!name) continue;
    functions_.push_back(Function{*start, *end, *name, static_cast<uint32_t>(func)});
  }
  std::sort(functions_.begin(), functions_.end(),
            [](const Function& a, const Function& b) { return a.start < b.start; });
  // Overlapping entries (a crafted table): each ends where the next starts.
  for (size_t i = 1; i < functions_.size(); ++i) {
    functions_[i - 1].end = std::min(functions_[i - 1].end, functions_[i].start);
  }
  std::erase_if(functions_, [](const Function& f) { return f.start >= f.end; });
  return true;
}

std::vector<GoPclntab::Step> GoPclntab::Decode(uint32_t offset, const Function& function) const {
  std::vector<Step> steps;
  if (offset == 0) return steps;
  uint64_t at = pctab_ + offset;
  const auto varint = [&](uint32_t* out) {
    uint32_t value = 0;
    for (uint32_t shift = 0; shift < 35; shift += 7) {
      if (at >= bytes_.size()) return false;
      const auto byte = static_cast<uint8_t>(bytes_[at++]);
      value |= static_cast<uint32_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *out = value;
        return true;
      }
    }
    return false;
  };
  int32_t value = -1;
  uint64_t pc = function.start;
  for (uint32_t step = 0; step < kMaxSteps && pc < function.end; ++step) {
    uint32_t value_delta = 0, pc_delta = 0;
    if (!varint(&value_delta) || (value_delta == 0 && step != 0)) break;
    // Zig-zag: the low bit is the sign. Wrapping, as Go's int32 adds (a
    // crafted table may run past INT32_MAX).
    value = static_cast<int32_t>(static_cast<uint32_t>(value) +
                                 (-(value_delta & 1) ^ (value_delta >> 1)));
    if (!varint(&pc_delta)) break;
    // A step of no pcs holds for none (Go writes none such; a crafted
    // table of them would take memory for nothing): only the pc moves.
    if (pc_delta == 0) continue;
    pc += uint64_t{pc_delta} * quantum_;
    steps.push_back(Step{pc, value});
  }
  return steps;
}

namespace {

// The value `steps` give `pc`, or -1 past their end.
int32_t ValueAt(const std::vector<GoPclntab::Step>& steps, uint64_t pc) {
  auto step =
      std::upper_bound(steps.begin(), steps.end(), pc,
                       [](uint64_t value, const GoPclntab::Step& s) { return value < s.end; });
  return step != steps.end() ? step->value : -1;
}

}  // namespace

std::optional<std::string_view> GoPclntab::FileName(const Function& function, int32_t index) const {
  if (index < 0) return std::nullopt;
  if (version_ == Version::k12) {
    const auto name = U32(filetab_ + 4 * static_cast<uint64_t>(index));
    return name ? CString(*name) : std::nullopt;
  }
  const uint64_t cu_field = version_ == Version::k116 ? ptr_size_ + 28 : 32;
  const auto cu = U32(function.func_offset + cu_field);
  if (!cu) return std::nullopt;
  const auto file = U32(cutab_ + 4 * (uint64_t{*cu} + static_cast<uint64_t>(index)));
  if (!file || *file == UINT32_MAX) return std::nullopt;
  return CString(filetab_ + *file);
}

const GoPclntab::Function* GoPclntab::FunctionAt(uint64_t pc) const {
  auto next = std::upper_bound(functions_.begin(), functions_.end(), pc,
                               [](uint64_t value, const Function& f) { return value < f.start; });
  if (next == functions_.begin()) return nullptr;
  const Function& function = *(next - 1);
  return pc < function.end ? &function : nullptr;
}

std::optional<GoPclntab::Line> GoPclntab::LineAt(const Function& function, uint64_t pc) const {
  if (pc < function.start || pc >= function.end) return std::nullopt;
  return LineIn(TablesOf(function), pc);
}

std::optional<GoPclntab::Line> GoPclntab::LineIn(const FunctionTables& tables, uint64_t pc) const {
  const int32_t line = ValueAt(tables.line, pc);
  if (line <= 0) return std::nullopt;
  const auto file = FileName(*tables.function, ValueAt(tables.file, pc));
  if (!file) return std::nullopt;
  return Line{*file, static_cast<uint32_t>(line)};
}

// _func in Go 1.18 and 1.19 is 40 bytes, in 1.20 and later 44 (startLine
// was added); the u32 at 28 counts the pcdata, its last byte the funcdata,
// and after it come the pcdata offsets, then the funcdata offsets. The
// offset of pcdata `index` (or with `funcdata`, of funcdata `index`), or
// nullopt when the function has none such (or the release has other
// layouts).
std::optional<uint64_t> GoPclntab::TrailerField(const Function& function, uint32_t index,
                                                bool funcdata) const {
  if (version_ != Version::k118 && version_ != Version::k120) return std::nullopt;
  const uint64_t fixed = version_ == Version::k120 ? 44 : 40;
  const auto npcdata = U32(function.func_offset + 28);
  const uint64_t nfuncdata_at = function.func_offset + fixed - 1;
  if (!npcdata || nfuncdata_at >= bytes_.size()) return std::nullopt;
  const uint32_t count = funcdata ? static_cast<uint8_t>(bytes_[nfuncdata_at]) : *npcdata;
  if (index >= count) return std::nullopt;
  return function.func_offset + fixed + 4 * ((funcdata ? uint64_t{*npcdata} : 0) + index);
}

GoPclntab::FunctionTables GoPclntab::TablesOf(const Function& function) const {
  FunctionTables tables;
  tables.function = &function;
  // pcfile and pcln: the fields after pcsp.
  const uint64_t pcfile_field =
      version_ == Version::k118 || version_ == Version::k120 ? 20 : ptr_size_ + 16;
  if (const auto pcfile = U32(function.func_offset + pcfile_field)) {
    tables.file = Decode(*pcfile, function);
  }
  if (const auto pcln = U32(function.func_offset + pcfile_field + 4)) {
    tables.line = Decode(*pcln, function);
  }
  if (funcdata_.empty()) return tables;
  // PCDATA_InlTreeIndex and FUNCDATA_InlTree (runtime/symtab.go).
  constexpr uint32_t kInlTreeIndex = 2, kInlTree = 3;
  const auto index_field = TrailerField(function, kInlTreeIndex, /*funcdata=*/false);
  const auto tree_field = TrailerField(function, kInlTree, /*funcdata=*/true);
  const auto index_table = index_field ? U32(*index_field) : std::nullopt;
  const auto tree = tree_field ? U32(*tree_field) : std::nullopt;
  if (!index_table || !tree || *tree == UINT32_MAX || *tree >= funcdata_.size()) return tables;
  tables.inline_index = Decode(*index_table, function);
  tables.inline_tree = *tree;
  return tables;
}

std::vector<GoPclntab::Frame> GoPclntab::FramesAt(const FunctionTables& tables, uint64_t pc) const {
  std::vector<Frame> frames;
  const Function& function = *tables.function;
  if (pc < function.start || pc >= function.end) return frames;
  // An inlined call's entry: Go 1.18-1.19 {parent i16, funcID u8, pad,
  // file i32, line i32, nameOff i32, parentPc i32}; 1.20 and later
  // {funcID u8, pad[3], nameOff i32, parentPc i32, startLine i32}. The
  // call site is the line of the instruction at parentPc, which belongs to
  // the caller, so each frame's line is its pc's (as the runtime unwinds).
  const bool go120 = version_ == Version::k120;
  const uint64_t entry_size = go120 ? 16 : 20, name_field = go120 ? 4 : 12;
  const auto funcdata_u32 = [&](uint64_t offset) -> std::optional<uint32_t> {
    if (offset > funcdata_.size() || funcdata_.size() - offset < 4) return std::nullopt;
    uint32_t value;
    std::memcpy(&value, funcdata_.data() + offset, 4);
    return value;
  };
  // A chain of an inline tree never goes deeper than Go inlines (a bound
  // for crafted trees that loop).
  constexpr size_t kMaxDepth = 64;
  int32_t index = tables.inline_tree ? ValueAt(tables.inline_index, pc) : -1;
  while (index >= 0 && frames.size() < kMaxDepth) {
    const uint64_t entry = *tables.inline_tree + uint64_t(index) * entry_size;
    const auto name_offset = funcdata_u32(entry + name_field);
    const auto parent_pc = funcdata_u32(entry + name_field + 4);
    if (!name_offset || !parent_pc) break;
    const auto name = CString(funcnames_ + static_cast<int32_t>(*name_offset));
    const uint64_t caller_pc = function.start + *parent_pc;
    if (!name || caller_pc >= function.end) break;
    frames.push_back(Frame{*name, LineIn(tables, pc)});
    pc = caller_pc;
    index = ValueAt(tables.inline_index, pc);
  }
  frames.push_back(Frame{function.name, LineIn(tables, pc)});
  return frames;
}

GoPclntab::PcKey GoPclntab::KeyAt(const FunctionTables& tables, uint64_t pc) const {
  return PcKey{ValueAt(tables.file, pc), ValueAt(tables.line, pc),
               tables.inline_tree ? ValueAt(tables.inline_index, pc) : -1};
}

std::optional<uint64_t> GoPclntab::FindGoFunc(std::span<const std::byte> data,
                                              uint64_t table_address) const {
  if (version_ != Version::k118 && version_ != Version::k120) return std::nullopt;
  // moduledata (runtime/symtab.go): pcHeader, then the slices funcnametab,
  // cutab, filetab, pctab, pclntable, ftab ({pointer, length, capacity}
  // each), ...; gofunc is its word 38 (1.18, 1.19), 40 from 1.20 on
  // (covctrs and ecovctrs came before it), right after rodata.
  const uint64_t ps = ptr_size_;
  const uint64_t gofunc_word = version_ == Version::k120 ? 40 : 38;
  const std::array<uint64_t, 6> parts = {funcnames_, cutab_, filetab_, pctab_, pcln_, pcln_};
  const auto word = [&](uint64_t offset) {
    uint64_t value = 0;
    std::memcpy(&value, data.data() + offset, ps);
    return value;
  };
  const uint64_t size = (gofunc_word + 1) * ps;
  for (uint64_t at = 0; data.size() >= size && at <= data.size() - size; at += ps) {
    if (word(at) != table_address) continue;
    bool same = true;
    for (size_t part = 0; part < parts.size() && same; ++part) {
      same = word(at + (1 + 3 * part) * ps) == table_address + parts[part];
    }
    // minpc (word 20 in every layout read here): the first function's entry.
    if (!same || functions_.empty() || word(at + 20 * ps) != functions_.front().start) continue;
    const uint64_t rodata = word(at + (gofunc_word - 1) * ps), gofunc = word(at + gofunc_word * ps);
    if (gofunc >= rodata && gofunc != 0) return gofunc;
  }
  return std::nullopt;
}

void GoPclntab::AttachFuncData(std::span<const std::byte> bytes) {
  funcdata_.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace sample
