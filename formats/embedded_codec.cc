#include "formats/embedded_codec.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "formats/embedded_fields.h"

namespace sample::format {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr size_t kRegisters = X86FrameRule::kDwarfRegs.size();
constexpr uint64_t kFixedAddress = 1;     // binary flags
constexpr uint64_t kExecutable = 1;       // segment flags
constexpr uint64_t kRowUsable = 1;        // CFI row flags
constexpr uint64_t kRowCfaFromRbp = 2;    //
constexpr uint32_t kRowOffsetsShift = 2;  // then one bit per register (bits 2-8)
constexpr uint64_t kRowCfaPlt = uint64_t{1} << 9;
constexpr uint64_t kRowCfaFromRbx = uint64_t{1} << 10;
constexpr uint64_t kRowSignalFrame = uint64_t{1} << 11;
constexpr uint64_t kKindMask = 3;  // 2 bits per register's kind
constexpr uint64_t kMaxKind = static_cast<uint64_t>(X86FrameRule::Kind::kAtCfa);

// ---------------------------------------------------------------- writing

// The strings the tables name, each once, indexed in order of first use.
class StringTable {
 public:
  uint64_t Index(std::string_view text) {
    auto [it, inserted] = index_.try_emplace(text, strings_.size());
    if (inserted) strings_.push_back(text);
    return it->second;
  }
  void Put(std::vector<std::byte>& out) const {
    PutVarint(out, strings_.size());
    for (std::string_view text : strings_) PutString(out, text);
  }

 private:
  std::unordered_map<std::string_view, uint64_t> index_;
  std::vector<std::string_view> strings_;
};

// `items` ordered by key, the first of equal keys kept (Normalize's order).
template <typename T, typename Key>
std::vector<const T*> SortedUnique(const std::vector<T>& items, Key key_of) {
  std::vector<const T*> sorted;
  sorted.reserve(items.size());
  for (const T& item : items) sorted.push_back(&item);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const T* a, const T* b) { return key_of(*a) < key_of(*b); });
  sorted.erase(std::unique(sorted.begin(), sorted.end(),
                           [&](const T* a, const T* b) { return key_of(*a) == key_of(*b); }),
               sorted.end());
  return sorted;
}

// Sorted unique keys: the first as it is, then each one's gap minus 1.
class KeyWriter {
 public:
  void Put(std::vector<std::byte>& out, uint64_t key) {
    PutVarint(out, first_ ? key : key - previous_ - 1);
    first_ = false;
    previous_ = key;
  }

 private:
  bool first_ = true;
  uint64_t previous_ = 0;
};

void PutSegments(std::vector<std::byte>& out, const std::vector<EmbeddedSegment>& segments) {
  std::vector<const EmbeddedSegment*> kept;
  for (const EmbeddedSegment& s : segments) {
    if (s.filesz <= kMax - s.offset && s.memsz <= kMax - s.vaddr) kept.push_back(&s);
  }
  PutVarint(out, kept.size());
  for (const EmbeddedSegment* s : kept) {
    PutVarint(out, s->offset);
    PutVarint(out, s->filesz);
    PutVarint(out, s->vaddr);
    PutVarint(out, s->memsz);
    PutVarint(out, s->executable ? kExecutable : 0);
  }
}

void PutAddresses(std::vector<std::byte>& out, const EmbeddedBinary& binary, StringTable& strings) {
  const auto sorted =
      SortedUnique(binary.addresses, [](const EmbeddedAddress& a) { return a.offset; });
  PutVarint(out, sorted.size());
  KeyWriter keys;
  for (const EmbeddedAddress* address : sorted) {
    keys.Put(out, address->offset);
    PutVarint(out, address->frames.size());
    for (const AddressFrame& frame : address->frames) {
      PutVarint(out, strings.Index(frame.name) << 1 | (frame.inlined ? 1 : 0));
      PutVarint(out, strings.Index(frame.file));
      PutVarint(out, frame.line);
      PutVarint(out, frame.symbol_offset + 1);  // UINT64_MAX (unknown) is 0
    }
  }
}

void PutFunctions(std::vector<std::byte>& out, const EmbeddedBinary& binary, StringTable& strings) {
  auto sorted = SortedUnique(binary.functions, [](const EmbeddedFunction& f) { return f.start; });
  std::erase_if(sorted, [](const EmbeddedFunction* f) { return f->size > kMax - f->start; });
  PutVarint(out, sorted.size());
  KeyWriter keys;
  for (const EmbeddedFunction* function : sorted) {
    keys.Put(out, function->start);
    PutVarint(out, function->size);
    PutVarint(out, strings.Index(function->name));
  }
}

void PutRule(std::vector<std::byte>& out, const X86FrameRule& rule) {
  using Base = X86FrameRule::CfaBase;
  uint64_t flags = (rule.usable ? kRowUsable : 0) | (rule.cfa_plt ? kRowCfaPlt : 0) |
                   (rule.signal_frame ? kRowSignalFrame : 0) |
                   (rule.cfa_base == Base::kRbp   ? kRowCfaFromRbp
                    : rule.cfa_base == Base::kRbx ? kRowCfaFromRbx
                                                  : 0);
  uint64_t kinds = 0;
  for (size_t i = 0; i < kRegisters; ++i) {
    if (rule.offset[i] != 0) flags |= uint64_t{1} << (kRowOffsetsShift + i);
    kinds |= static_cast<uint64_t>(rule.kind[i]) << (2 * i);
  }
  PutVarint(out, flags);
  PutSigned(out, rule.cfa_offset);
  PutVarint(out, kinds);
  for (size_t i = 0; i < kRegisters; ++i) {
    if (rule.offset[i] != 0) PutSigned(out, rule.offset[i]);
  }
}

// Rows by start, without empty ones and those over an earlier row's range.
void PutCfi(std::vector<std::byte>& out, const std::vector<CfiRow>& cfi) {
  auto sorted = SortedUnique(cfi, [](const CfiRow& r) { return r.start; });
  std::vector<const CfiRow*> kept;
  for (const CfiRow* row : sorted) {
    if (row->end <= row->start || (!kept.empty() && row->start < kept.back()->end)) continue;
    kept.push_back(row);
  }
  PutVarint(out, kept.size());
  uint64_t previous_end = 0;
  for (const CfiRow* row : kept) {
    PutVarint(out, row->start - previous_end);
    PutVarint(out, row->end - row->start);
    PutRule(out, row->rule);
    previous_end = row->end;
  }
}

void PutCode(std::vector<std::byte>& out, const std::vector<EmbeddedCode>& code) {
  auto sorted = SortedUnique(code, [](const EmbeddedCode& c) { return c.vaddr; });
  std::vector<const EmbeddedCode*> kept;
  uint64_t previous_end = 0;
  for (const EmbeddedCode* range : sorted) {
    if (range->bytes.empty() || range->bytes.size() > kMax - range->vaddr ||
        (!kept.empty() && range->vaddr < previous_end)) {
      continue;
    }
    kept.push_back(range);
    previous_end = range->vaddr + range->bytes.size();
  }
  PutVarint(out, kept.size());
  previous_end = 0;
  for (const EmbeddedCode* range : kept) {
    PutVarint(out, range->vaddr - previous_end);
    PutVarint(out, range->bytes.size());
    PutBytes(out, range->bytes.data(), range->bytes.size());
    previous_end = range->vaddr + range->bytes.size();
  }
}

// ---------------------------------------------------------------- reading

// A string index at `start` of the table: checked as TableString checks
// it, nothing copied.
Result<void> CheckStringIndex(FieldReader& in, std::span<const std::string_view> strings,
                              uint64_t index, uint64_t start, std::string_view field) {
  if (index >= strings.size()) {
    return in.Problem(start, field,
                      fmt::format("string index {}, beyond the table's {}", index, strings.size()));
  }
  return {};
}

// A copy of string `index` of the table, charged.
Result<std::string> TableString(FieldReader& in, std::span<const std::string_view> strings,
                                uint64_t index, uint64_t start, std::string_view field) {
  TRY(CheckStringIndex(in, strings, index, start, field));
  TRY(in.Charge(strings[index].size(), 1, start, field));
  return std::string(strings[index]);
}

Result<std::string> StringField(FieldReader& in, std::string_view field) {
  const uint64_t start = in.offset();
  TRY_ASSIGN(const std::string_view text, in.String(field));
  TRY(in.Charge(text.size(), 1, start, field));
  return std::string(text);
}

// The keys KeyWriter wrote.
class KeyReader {
 public:
  Result<uint64_t> Next(FieldReader& in, std::string_view field) {
    const uint64_t start = in.offset();
    TRY_ASSIGN(const uint64_t gap, in.Varint(field));
    if (!first_ && gap >= kMax - previous_) return in.Problem(start, field, "past 2^64");
    previous_ = first_ ? gap : previous_ + gap + 1;
    first_ = false;
    return previous_;
  }

 private:
  bool first_ = true;
  uint64_t previous_ = 0;
};

// A range written as its gap from `previous_end` and its size (not 0),
// whose end stays within 2^64.
struct Range {
  uint64_t start = 0;
  uint64_t size = 0;
};

Result<Range> ReadRange(FieldReader& in, uint64_t previous_end, std::string_view field) {
  const uint64_t start = in.offset();
  TRY_ASSIGN(const uint64_t gap, in.Varint(field));
  TRY_ASSIGN(const uint64_t size, in.Varint(field));
  if (gap > kMax - previous_end) return in.Problem(start, field, "starts past 2^64");
  if (size == 0) return in.Problem(start, field, "an empty range");
  if (size > kMax - (previous_end + gap)) return in.Problem(start, field, "ends past 2^64");
  return Range{previous_end + gap, size};
}

Result<void> ReadHeader(FieldReader& in, EmbeddedBinary& binary) {
  TRY_ASSIGN(binary.path, StringField(in, "path"));
  TRY_ASSIGN(binary.build_id, StringField(in, "build-id"));
  TRY_ASSIGN(const uint64_t flags, in.Flags("binary flags", kFixedAddress));
  binary.fixed_address = (flags & kFixedAddress) != 0;
  TRY_ASSIGN(binary.code_omitted, in.Varint("omitted code count"));
  return {};
}

Result<std::vector<std::string_view>> ReadStrings(FieldReader& in) {
  TRY_ASSIGN(const uint64_t count, in.Count("string count", 1, sizeof(std::string_view)));
  std::vector<std::string_view> strings;
  strings.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    TRY_ASSIGN(const std::string_view text, in.String("string"));
    strings.push_back(text);
  }
  return strings;
}

Result<void> ReadSegments(FieldReader& in, EmbeddedBinary& binary) {
  TRY_ASSIGN(const uint64_t count, in.Count("segment count", 5, sizeof(EmbeddedSegment)));
  binary.segments.resize(count);
  for (EmbeddedSegment& segment : binary.segments) {
    const uint64_t start = in.offset();
    TRY_ASSIGN(segment.offset, in.Varint("segment offset"));
    TRY_ASSIGN(segment.filesz, in.Varint("segment file size"));
    TRY_ASSIGN(segment.vaddr, in.Varint("segment address"));
    TRY_ASSIGN(segment.memsz, in.Varint("segment memory size"));
    TRY_ASSIGN(const uint64_t flags, in.Flags("segment flags", kExecutable));
    segment.executable = (flags & kExecutable) != 0;
    if (segment.filesz > kMax - segment.offset || segment.memsz > kMax - segment.vaddr) {
      return in.Problem(start, "segment", "ends past 2^64");
    }
  }
  return {};
}

Result<AddressFrame> ReadFrame(FieldReader& in, std::span<const std::string_view> strings) {
  AddressFrame frame;
  uint64_t start = in.offset();
  TRY_ASSIGN(const uint64_t name, in.Varint("frame name"));
  TRY_ASSIGN(frame.name, TableString(in, strings, name >> 1, start, "frame name"));
  frame.inlined = (name & 1) != 0;
  start = in.offset();
  TRY_ASSIGN(const uint64_t file, in.Varint("frame file"));
  TRY_ASSIGN(frame.file, TableString(in, strings, file, start, "frame file"));
  TRY_ASSIGN(frame.line, in.Varint32("frame line"));
  TRY_ASSIGN(const uint64_t symbol_offset, in.Varint("frame symbol offset"));
  frame.symbol_offset = symbol_offset - 1;  // 0 is UINT64_MAX, unknown
  return frame;
}

// A frame past the inline depth kept: read with ReadFrame's checks and
// errors, nothing copied or charged.
Result<void> SkipFrame(FieldReader& in, std::span<const std::string_view> strings) {
  uint64_t start = in.offset();
  TRY_ASSIGN(const uint64_t name, in.Varint("frame name"));
  TRY(CheckStringIndex(in, strings, name >> 1, start, "frame name"));
  start = in.offset();
  TRY_ASSIGN(const uint64_t file, in.Varint("frame file"));
  TRY(CheckStringIndex(in, strings, file, start, "frame file"));
  TRY(in.Varint32("frame line"));
  TRY(in.Varint("frame symbol offset"));
  return {};
}

// An address's chain deeper than kMaxReadInlineDepth keeps its innermost
// frames and the last (as CutInlineChain cuts it): a few kilobytes of
// zstd can hold 100,000 inlined calls per address.
Result<void> ReadAddresses(FieldReader& in, std::span<const std::string_view> strings,
                           EmbeddedBinary& binary) {
  TRY_ASSIGN(const uint64_t count, in.Count("address count", 2, sizeof(EmbeddedAddress)));
  binary.addresses.resize(count);
  KeyReader keys;
  for (EmbeddedAddress& address : binary.addresses) {
    TRY_ASSIGN(address.offset, keys.Next(in, "address"));
    TRY_ASSIGN(const uint64_t frames,
               in.Count("frame count", 4, sizeof(AddressFrame), kMaxReadInlineDepth));
    address.frames.reserve(std::min<uint64_t>(frames, kMaxReadInlineDepth));
    for (uint64_t i = 0; i < frames; ++i) {
      if (i + 1 >= kMaxReadInlineDepth && i + 1 < frames) {
        TRY(SkipFrame(in, strings));
        continue;
      }
      TRY_ASSIGN(AddressFrame frame, ReadFrame(in, strings));
      address.frames.push_back(std::move(frame));
    }
  }
  return {};
}

Result<void> ReadFunctions(FieldReader& in, std::span<const std::string_view> strings,
                           EmbeddedBinary& binary) {
  TRY_ASSIGN(const uint64_t count, in.Count("function count", 3, sizeof(EmbeddedFunction)));
  binary.functions.resize(count);
  KeyReader keys;
  for (EmbeddedFunction& function : binary.functions) {
    const uint64_t start = in.offset();
    TRY_ASSIGN(function.start, keys.Next(in, "function start"));
    TRY_ASSIGN(function.size, in.Varint("function size"));
    if (function.size > kMax - function.start) {
      return in.Problem(start, "function", "ends past 2^64");
    }
    const uint64_t name_start = in.offset();
    TRY_ASSIGN(const uint64_t name, in.Varint("function name"));
    TRY_ASSIGN(function.name, TableString(in, strings, name, name_start, "function name"));
  }
  return {};
}

Result<X86FrameRule> ReadRule(FieldReader& in) {
  X86FrameRule rule;
  constexpr uint64_t kKnown = kRowUsable | kRowCfaFromRbp | kRowCfaPlt | kRowCfaFromRbx |
                              kRowSignalFrame |
                              (((uint64_t{1} << kRegisters) - 1) << kRowOffsetsShift);
  const uint64_t flags_start = in.offset();
  TRY_ASSIGN(const uint64_t flags, in.Flags("CFI row flags", kKnown));
  if ((flags & kRowCfaFromRbp) != 0 && (flags & kRowCfaFromRbx) != 0) {
    return in.Problem(flags_start, "CFI row flags", "a CFA from both rbp and rbx");
  }
  rule.usable = (flags & kRowUsable) != 0;
  rule.cfa_base = (flags & kRowCfaFromRbp) != 0   ? X86FrameRule::CfaBase::kRbp
                  : (flags & kRowCfaFromRbx) != 0 ? X86FrameRule::CfaBase::kRbx
                                                  : X86FrameRule::CfaBase::kRsp;
  rule.cfa_plt = (flags & kRowCfaPlt) != 0;
  rule.signal_frame = (flags & kRowSignalFrame) != 0;
  TRY_ASSIGN(rule.cfa_offset, in.Signed("CFI row CFA offset"));
  const uint64_t start = in.offset();
  TRY_ASSIGN(const uint64_t kinds, in.Varint("CFI row register rules"));
  if (kinds >> (2 * kRegisters) != 0) {
    return in.Problem(start, "CFI row register rules", fmt::format("unknown bits {:#x}", kinds));
  }
  for (size_t i = 0; i < kRegisters; ++i) {
    const uint64_t kind = (kinds >> (2 * i)) & kKindMask;
    if (kind > kMaxKind) {
      return in.Problem(start, "CFI row register rules",
                        fmt::format("unknown rule {} for register {}", kind, i));
    }
    rule.kind[i] = static_cast<X86FrameRule::Kind>(kind);
    if ((flags >> (kRowOffsetsShift + i) & 1) != 0) {
      TRY_ASSIGN(rule.offset[i], in.Signed("CFI row register offset"));
    }
  }
  return rule;
}

Result<void> ReadCfi(FieldReader& in, EmbeddedBinary& binary) {
  TRY_ASSIGN(const uint64_t count, in.Count("CFI row count", 5, sizeof(CfiRow)));
  binary.cfi.resize(count);
  uint64_t previous_end = 0;
  for (CfiRow& row : binary.cfi) {
    TRY_ASSIGN(const Range range, ReadRange(in, previous_end, "CFI row"));
    row.start = range.start;
    row.end = previous_end = range.start + range.size;
    TRY_ASSIGN(row.rule, ReadRule(in));
  }
  return {};
}

Result<void> ReadCode(FieldReader& in, EmbeddedBinary& binary) {
  TRY_ASSIGN(const uint64_t count, in.Count("code range count", 3, sizeof(EmbeddedCode)));
  binary.code.resize(count);
  uint64_t previous_end = 0;
  for (EmbeddedCode& code : binary.code) {
    const uint64_t start = in.offset();
    TRY_ASSIGN(const Range range, ReadRange(in, previous_end, "code range"));
    TRY_ASSIGN(const auto bytes, in.Bytes(range.size, start, "code range"));
    TRY(in.Charge(bytes.size(), 1, start, "code range"));
    code.vaddr = range.start;
    code.bytes.assign(bytes.begin(), bytes.end());
    previous_end = range.start + range.size;
  }
  return {};
}

Result<void> ReadBinary(FieldReader& in, EmbeddedBinary& binary) {
  TRY(ReadHeader(in, binary));
  TRY_ASSIGN(const auto strings, ReadStrings(in));
  TRY(ReadSegments(in, binary));
  TRY(ReadAddresses(in, strings, binary));
  TRY(ReadFunctions(in, strings, binary));
  TRY(ReadCfi(in, binary));
  TRY(ReadCode(in, binary));
  if (in.remaining() != 0) {
    return in.Problem(in.offset(), "the end of the tables",
                      fmt::format("{} more bytes in the chunk", in.remaining()));
  }
  return {};
}

}  // namespace

std::vector<std::byte> EncodeEmbeddedBinary(const EmbeddedBinary& binary) {
  // The tables first: they fill the string table that precedes them.
  StringTable strings;
  std::vector<std::byte> tables;
  PutSegments(tables, binary.segments);
  PutAddresses(tables, binary, strings);
  PutFunctions(tables, binary, strings);
  PutCfi(tables, binary.cfi);
  PutCode(tables, binary.code);

  std::vector<std::byte> out;
  PutString(out, binary.path);
  PutString(out, binary.build_id);
  PutVarint(out, binary.fixed_address ? kFixedAddress : 0);
  PutVarint(out, binary.code_omitted);
  strings.Put(out);
  out.insert(out.end(), tables.begin(), tables.end());
  return out;
}

// The object, its shared_ptr and its index entry, whatever it holds: a
// file of millions of tiny chunks is bounded too.
constexpr uint64_t kPerBinaryCost = 1024;

uint64_t EmbeddedMemoryCost(const EmbeddedBinary& binary) {
  uint64_t cost = kPerBinaryCost + binary.path.size() + binary.build_id.size() +
                  binary.segments.size() * sizeof(EmbeddedSegment) +
                  binary.addresses.size() * sizeof(EmbeddedAddress) +
                  binary.functions.size() * sizeof(EmbeddedFunction) +
                  binary.cfi.size() * sizeof(CfiRow) + binary.code.size() * sizeof(EmbeddedCode);
  for (const EmbeddedAddress& address : binary.addresses) {
    cost += address.frames.size() * sizeof(AddressFrame);
    for (const AddressFrame& frame : address.frames) cost += frame.name.size() + frame.file.size();
  }
  for (const EmbeddedFunction& function : binary.functions) cost += function.name.size();
  for (const EmbeddedCode& code : binary.code) cost += code.bytes.size();
  return cost;
}

Result<EmbeddedBinary> DecodeEmbeddedBinary(std::span<const std::byte> payload,
                                            uint64_t payload_offset, uint64_t memory_limit,
                                            uint64_t* charged) {
  FieldReader in(payload, payload_offset, memory_limit);
  EmbeddedBinary binary;
  if (charged != nullptr) *charged = 0;
  // What every binary costs (EmbeddedMemoryCost's), charged first.
  TRY(in.Charge(1, kPerBinaryCost, in.offset(), "embedded binary"));
  auto read = ReadBinary(in, binary);
  if (charged != nullptr) *charged = in.used();
  if (!read) {
    if (binary.path.empty()) return tl::unexpected(std::move(read).error());
    return Fail(fmt::format("'{}': {}", binary.path, read.error().message));
  }
  // The layout keeps the tables sorted and unique; nothing to normalize.
  return binary;
}

std::vector<std::byte> EncodePerfMap(const RecordedPerfMap& map) {
  std::vector<std::byte> out;
  PutBytes(out, &map.pid, sizeof(map.pid));
  PutBytes(out, map.text.data(), map.text.size());
  return out;
}

Result<RecordedPerfMap> DecodePerfMap(std::span<const std::byte> payload, uint64_t payload_offset) {
  ByteReader in(payload, payload_offset);
  RecordedPerfMap map;
  if (!in.Read(&map.pid)) {
    return Fail(fmt::format("perf map at offset {}: {} bytes, too short for its pid",
                            payload_offset, payload.size()));
  }
  const auto text = payload.subspan(in.position());
  map.text.assign(reinterpret_cast<const char*>(text.data()), text.size());
  return map;
}

std::vector<std::byte> EncodeJitDumpPart(uint32_t pid, uint32_t part,
                                         std::span<const std::byte> bytes) {
  std::vector<std::byte> out;
  out.reserve(8 + bytes.size());
  PutBytes(out, &pid, sizeof(pid));
  PutBytes(out, &part, sizeof(part));
  PutBytes(out, bytes.data(), bytes.size());
  return out;
}

Result<JitDumpPart> DecodeJitDumpPart(std::span<const std::byte> payload, uint64_t payload_offset) {
  ByteReader in(payload, payload_offset);
  JitDumpPart part;
  if (!in.Read(&part.pid) || !in.Read(&part.part)) {
    return Fail(fmt::format("jitdump at offset {}: {} bytes, too short for its pid and part",
                            payload_offset, payload.size()));
  }
  part.bytes = payload.subspan(in.position());
  return part;
}

}  // namespace sample::format
