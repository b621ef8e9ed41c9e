#include "libsample/symbols/go_pclntab.h"

#include <algorithm>
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

std::optional<int32_t> GoPclntab::PcValue(uint32_t offset, uint64_t entry, uint64_t pc) const {
  if (offset == 0) return std::nullopt;
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
  uint64_t step_pc = entry;
  for (uint32_t step = 0; step < kMaxSteps; ++step) {
    uint32_t value_delta = 0, pc_delta = 0;
    if (!varint(&value_delta) || (value_delta == 0 && step != 0)) return std::nullopt;
    // Zig-zag: the low bit is the sign.
    value += static_cast<int32_t>(-(value_delta & 1) ^ (value_delta >> 1));
    if (!varint(&pc_delta)) return std::nullopt;
    step_pc += uint64_t{pc_delta} * quantum_;
    if (pc < step_pc) return value;
  }
  return std::nullopt;
}

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
  // pcfile and pcln: the fields after pcsp.
  const uint64_t pcfile_field =
      version_ == Version::k118 || version_ == Version::k120 ? 20 : ptr_size_ + 16;
  const auto pcfile = U32(function.func_offset + pcfile_field);
  const auto pcln = U32(function.func_offset + pcfile_field + 4);
  if (!pcfile || !pcln) return std::nullopt;
  const auto file_index = PcValue(*pcfile, function.start, pc);
  const auto line = PcValue(*pcln, function.start, pc);
  if (!file_index || !line || *line <= 0) return std::nullopt;
  const auto file = FileName(function, *file_index);
  if (!file) return std::nullopt;
  return Line{*file, static_cast<uint32_t>(*line)};
}

}  // namespace sample
