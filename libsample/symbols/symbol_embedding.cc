#include "libsample/symbols/symbol_embedding.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/address_frames.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/call_sites.h"
#include "libsample/symbols/cfi_rows.h"

namespace sample {
namespace {

// A function holding leaf offsets, with their samples by event.
struct SampledFunction {
  EmbeddedFunction function;
  std::vector<uint64_t> samples;
};

// The request's lookup offsets, leaves included: sorted, unique.
std::vector<uint64_t> LookupOffsets(const EmbeddingRequest& request) {
  std::vector<uint64_t> offsets = request.offsets;
  offsets.insert(offsets.end(), request.leaf_offsets.begin(), request.leaf_offsets.end());
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  return offsets;
}

// The function holding each address: its ELF symbol, else its FDE. Asked
// in address order, it reuses the last FDE found (walking an FDE's rows
// is the costly part, for binaries stripped of their symbols).
class FunctionFinder {
 public:
  FunctionFinder(BinarySymbolizer& symbolizer, std::string display_name)
      : symbolizer_(symbolizer), display_name_(std::move(display_name)) {}

  std::optional<EmbeddedFunction> At(uint64_t vaddr) {
    const ElfSymbols& elf = symbolizer_.elf_symbols();
    uint64_t end = 0;
    if (const ElfSymbol* symbol = elf.Find(vaddr, &end)) {
      return EmbeddedFunction{symbol->start, end - symbol->start, symbolizer_.SymbolName(*symbol)};
    }
    if (last_fde_ && vaddr - last_fde_->start < last_fde_->size) return last_fde_;
    const std::optional<CfiRange> range = symbolizer_.CfiFunctionRange(vaddr);
    if (!range) return std::nullopt;
    // Named after the FDE's start, as FramesAtFileOffset names it, but cut
    // to the addresses no ELF symbol's extent holds, so that the functions
    // stay apart and the last one starting at or below an address is the
    // one that holds it (EmbeddedBinary::FunctionAt), as for ElfSymbols.
    uint64_t start = range->start;
    uint64_t stop = range->end;
    const std::vector<ElfSymbol>& symbols = elf.symbols();
    auto next = std::upper_bound(symbols.begin(), symbols.end(), vaddr,
                                 [](uint64_t v, const ElfSymbol& s) { return v < s.start; });
    if (next != symbols.end()) stop = std::min(stop, next->start);
    uint64_t previous_end = 0;
    if (next != symbols.begin() && elf.Find(std::prev(next)->start, &previous_end)) {
      start = std::max(start, previous_end);  // at or below vaddr: Find(vaddr) gave nothing
    }
    last_fde_ =
        EmbeddedFunction{start, stop - start, fmt::format("{}+{:#x}", display_name_, range->start)};
    return last_fde_;
  }

 private:
  BinarySymbolizer& symbolizer_;
  const std::string display_name_;
  std::optional<EmbeddedFunction> last_fde_;
};

// A row and where it came from, until rows of the two sources are cut
// apart.
struct SourcedRow {
  CfiRow row;
  CfiSource source;
};

// Rows of .debug_frame hold addresses .eh_frame has no FDE for, but their
// ranges may reach into one's (an FDE of each kind in one function): there
// .eh_frame's row is the unwinder's, so the .debug_frame row is cut back
// to its side of it, where its own lookup addresses are. The rows of one
// source are disjoint already.
std::vector<CfiRow> DisjointRows(std::vector<SourcedRow> rows) {
  std::sort(rows.begin(), rows.end(),
            [](const SourcedRow& a, const SourcedRow& b) { return a.row.start < b.row.start; });
  std::vector<CfiRow> eh;
  for (const SourcedRow& r : rows) {
    if (r.source == CfiSource::kEhFrame) eh.push_back(r.row);
  }
  std::vector<CfiRow> out;
  for (SourcedRow& r : rows) {
    if (r.source == CfiSource::kDebugFrame) {
      // eh rows starting inside it cut its end; one holding its start, its start.
      auto after = std::upper_bound(eh.begin(), eh.end(), r.row.start,
                                    [](uint64_t v, const CfiRow& e) { return v < e.start; });
      if (after != eh.end()) r.row.end = std::min(r.row.end, after->start);
      if (after != eh.begin()) r.row.start = std::max(r.row.start, std::prev(after)->end);
      if (r.row.start >= r.row.end) continue;
    }
    out.push_back(r.row);
  }
  return out;
}

// The file offsets of [vaddr, vaddr + size), through the segment holding
// `vaddr` (cut at the end of its file contents); nullopt if none does.
std::optional<KnownFrames::Range> FileRange(const EmbeddedBinary& binary, uint64_t vaddr,
                                            uint64_t size) {
  for (const EmbeddedSegment& segment : binary.segments) {
    if (vaddr < segment.vaddr || vaddr - segment.vaddr >= segment.filesz) continue;
    const uint64_t into = vaddr - segment.vaddr;
    return KnownFrames::Range{segment.offset + into,
                              segment.offset + into + std::min(size, segment.filesz - into)};
  }
  return std::nullopt;
}

// The bytes of [vaddr, vaddr + size) in the file (FileRange); empty if no
// segment holds `vaddr`.
std::vector<std::byte> ReadCode(const EmbeddedBinary& binary, std::span<const std::byte> file,
                                uint64_t vaddr, uint64_t size) {
  const std::optional<KnownFrames::Range> range = FileRange(binary, vaddr, size);
  if (!range || range->begin > file.size() ||
      file.size() - range->begin < range->end - range->begin) {
    return {};
  }
  const auto bytes = file.subspan(range->begin, range->end - range->begin);
  return {bytes.begin(), bytes.end()};
}

// The code of `functions` (those holding sampled pcs; sorted by start),
// within `limits`. Functions that overlap (an ELF symbol inside another)
// are embedded as one range, so the code stays disjoint.
void EmbedCode(const std::vector<EmbeddedFunction>& functions, std::span<const std::byte> file,
               EmbeddingLimits& limits, EmbeddedBinary& binary) {
  struct Range {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t functions = 0;
  };
  std::vector<Range> ranges;
  for (const EmbeddedFunction& function : functions) {
    if (function.size > limits.max_function_code) {
      ++binary.code_omitted;
      continue;
    }
    const uint64_t end = function.start + function.size;
    if (!ranges.empty() && function.start < ranges.back().end) {
      ranges.back().end = std::max(ranges.back().end, end);
      ++ranges.back().functions;
    } else {
      ranges.push_back(Range{function.start, end, 1});
    }
  }
  for (const Range& range : ranges) {
    if (range.end - range.start > limits.code_budget) {
      binary.code_omitted += range.functions;
      continue;
    }
    std::vector<std::byte> bytes = ReadCode(binary, file, range.start, range.end - range.start);
    if (bytes.empty()) {
      binary.code_omitted += range.functions;
      continue;
    }
    limits.code_budget -= bytes.size();
    binary.code.push_back(EmbeddedCode{range.start, std::move(bytes)});
  }
}

std::span<const std::byte> RawFile(const ElfFile& file) {
  size_t size = 0;
  const char* raw = elf_rawfile(file.get(), &size);
  if (raw == nullptr) return {};
  return std::as_bytes(std::span(raw, size));
}

// Adds to `lookups` (sorted, unique; kept so) the offsets of `scanned`
// that can be return addresses (EmbeddingRequest::scanned_offsets), a
// lookup offset being the word's file offset - 1.
void AddReturnAddresses(const std::vector<uint64_t>& scanned, std::span<const std::byte> file,
                        uint16_t machine, const ElfSymbols& elf, std::vector<uint64_t>& lookups) {
  const auto starts_function = [&elf](uint64_t vaddr) {
    const ElfSymbol* symbol = elf.Find(vaddr);
    return symbol != nullptr && symbol->start == vaddr;
  };
  const size_t before = lookups.size();
  for (const uint64_t offset : scanned) {
    const uint64_t word = offset + 1;
    if (word > file.size()) continue;
    const uint64_t code = std::min<uint64_t>(word, 8);
    bool keep = EndsAfterCall(file.subspan(word - code, code), machine) ||
                StartsSigreturn(file.subspan(word), machine);
    if (const std::optional<uint64_t> vaddr = elf.FileOffsetToVaddr(word); !keep && vaddr) {
      keep = starts_function(*vaddr) || (*vaddr > 0 && starts_function(*vaddr - 1));
    }
    if (keep) lookups.push_back(offset);
  }
  std::sort(lookups.begin() + static_cast<ptrdiff_t>(before), lookups.end());
  std::inplace_merge(lookups.begin(), lookups.begin() + static_cast<ptrdiff_t>(before),
                     lookups.end());
  lookups.erase(std::unique(lookups.begin(), lookups.end()), lookups.end());
}

// A lookup offset the known frames lacked, with its address and function.
struct MissedOffset {
  uint64_t offset = 0;
  std::optional<uint64_t> vaddr;
  std::optional<EmbeddedFunction> function;
};

// Learns what `missed` offsets lack, within the limits: first the
// functions holding them (an offset no function holds, or whose function
// is over the limits, alone), then all of a small binary's code (up to
// EmbeddingLimits::max_learnt_binary: ld.so's and a small Go program's,
// whose start-up functions each run's samples hit a few different ones
// of), else the rest of
// their compilation units (the functions of the same source file:
// malloc.c's, dl-lookup.c's), which later recordings' samples are likely
// to hit.
void LearnFrames(BinarySymbolizer& symbolizer, const EmbeddedBinary& binary,
                 const std::vector<MissedOffset>& missed, std::string_view display_name,
                 EmbeddingLimits& limits, KnownFrames& known) {
  const auto learn = [&](KnownFrames::Range range) {
    if (range.end - range.begin > limits.learn_budget) return false;
    limits.learn_budget -= known.Learn(symbolizer, range.begin, range.end, display_name);
    return true;
  };
  for (const MissedOffset& m : missed) {
    if (known.Covers(m.offset)) continue;
    std::optional<KnownFrames::Range> range;
    if (m.function && m.function->size <= limits.max_learnt_function) {
      range = FileRange(binary, m.function->start, m.function->size);
    }
    if (!range || range->end - range->begin > limits.learn_budget || m.offset < range->begin ||
        m.offset >= range->end) {
      range = KnownFrames::Range{m.offset, m.offset + 1};
    }
    if (!learn(*range)) return;
  }
  uint64_t code_bytes = 0;
  for (const EmbeddedSegment& segment : binary.segments) {
    if (segment.executable) code_bytes += segment.filesz;
  }
  if (code_bytes <= limits.max_learnt_binary) {
    for (const EmbeddedSegment& segment : binary.segments) {
      if (segment.executable)
        learn(KnownFrames::Range{segment.offset, segment.offset + segment.filesz});
    }
    return;
  }
  std::vector<std::pair<uint64_t, uint64_t>> units;
  for (const MissedOffset& m : missed) {
    if (!m.vaddr || std::any_of(units.begin(), units.end(), [&](const auto& u) {
          return *m.vaddr >= u.first && *m.vaddr < u.second;
        })) {
      continue;
    }
    const auto ranges = symbolizer.UnitRangesAt(*m.vaddr);
    units.insert(units.end(), ranges.begin(), ranges.end());
    for (const auto& [lo, hi] : ranges) {
      if (hi - lo > limits.max_learnt_function) continue;
      if (auto range = FileRange(binary, lo, hi - lo)) learn(*range);
    }
  }
}

}  // namespace

Result<EmbeddedBinary> BuildEmbeddedBinary(const EmbeddingRequest& request,
                                           EmbeddingLimits& limits) {
  std::vector<uint64_t> lookups = LookupOffsets(request);
  KnownFrames* known = request.known;
  // Nothing to look up, or all of it known: no DWARF.
  const auto all_known = [&] {
    return std::all_of(lookups.begin(), lookups.end(), [known](uint64_t offset) {
      return known != nullptr && known->Covers(offset);
    });
  };
  const auto dwarf_use = [&] {
    return all_known() ? BinarySymbolizer::DwarfUse::kSkip : BinarySymbolizer::DwarfUse::kRead;
  };
  BinarySymbolizer::DwarfUse used = dwarf_use();
  TRY_ASSIGN(auto symbolizer, BinarySymbolizer::Open(request.binary, request.debug, used));
  TRY_ASSIGN(auto rows, CfiRows::Open(request.binary, request.debug));
  if (!request.scanned_offsets.empty()) {
    AddReturnAddresses(request.scanned_offsets, RawFile(rows.binary()),
                       rows.binary().ehdr().e_machine, symbolizer.elf_symbols(), lookups);
    // A word the known frames lack needs the DWARF after all.
    if (used == BinarySymbolizer::DwarfUse::kSkip && dwarf_use() != used) {
      used = BinarySymbolizer::DwarfUse::kRead;
      symbolizer.ReadDwarf();
    }
  }
  const ElfSymbols& elf = symbolizer.elf_symbols();
  const std::string display_name = Basename(request.path);

  EmbeddedBinary binary;
  binary.path = request.path;
  binary.build_id = request.identity.empty() ? elf.build_id() : request.identity;
  binary.fixed_address = elf.fixed_address();
  for (const ElfSymbols::LoadSegment& s : elf.segments()) {
    binary.segments.push_back(EmbeddedSegment{s.offset, s.filesz, s.vaddr, s.memsz, s.executable});
  }

  std::vector<uint64_t> leaves = request.leaf_offsets;
  std::sort(leaves.begin(), leaves.end());
  std::vector<LeafSamples> counted = request.leaf_samples;
  std::sort(counted.begin(), counted.end(),
            [](const LeafSamples& a, const LeafSamples& b) { return a.offset < b.offset; });
  std::vector<SampledFunction> leaf_functions;
  std::vector<SourcedRow> cfi;
  FunctionFinder functions(symbolizer, display_name);
  std::optional<CfiRow> last_eh_row;  // holds every later address it covers
  std::vector<MissedOffset> missed;
  for (const uint64_t offset : lookups) {
    std::optional<std::vector<AddressFrame>> frames;
    if (known != nullptr) frames = known->At(offset);
    const bool miss = known != nullptr && !frames;
    if (!frames) frames = FramesAtFileOffset(symbolizer, offset, display_name);
    binary.addresses.push_back(EmbeddedAddress{offset, std::move(*frames)});
    const std::optional<uint64_t> vaddr = elf.FileOffsetToVaddr(offset);
    if (!vaddr) {
      if (miss) missed.push_back(MissedOffset{offset, std::nullopt, std::nullopt});
      continue;
    }
    std::optional<EmbeddedFunction> function = functions.At(*vaddr);
    if (miss) missed.push_back(MissedOffset{offset, vaddr, function});
    if (function) {
      if (std::binary_search(leaves.begin(), leaves.end(), offset) &&
          (leaf_functions.empty() || leaf_functions.back().function.start != function->start)) {
        leaf_functions.push_back(SampledFunction{*function, {}});
      }
      auto count = std::lower_bound(counted.begin(), counted.end(), offset,
                                    [](const LeafSamples& l, uint64_t o) { return l.offset < o; });
      for (; count != counted.end() && count->offset == offset; ++count) {
        // Counted samples are at leaves; one the request forgot is taken.
        if (leaf_functions.empty() || leaf_functions.back().function.start != function->start) {
          leaf_functions.push_back(SampledFunction{*function, {}});
        }
        std::vector<uint64_t>& by_event = leaf_functions.back().samples;
        if (count->event >= by_event.size()) by_event.resize(count->event + 1, 0);
        by_event[count->event] += count->samples;
      }
      if (binary.functions.empty() || binary.functions.back().start != function->start) {
        binary.functions.push_back(std::move(*function));
      }
    }
    if (last_eh_row && *vaddr >= last_eh_row->start && *vaddr < last_eh_row->end) continue;
    CfiSource source = CfiSource::kEhFrame;
    if (std::optional<CfiRow> row = rows.RowAt(*vaddr, &source)) {
      if (source == CfiSource::kEhFrame) last_eh_row = row;
      cfi.push_back(SourcedRow{std::move(*row), source});
    }
  }
  binary.cfi = DisjointRows(std::move(cfi));
  // A function's leaves in one run, as the offsets are sorted; its
  // samples summed should another run name it again.
  std::sort(leaf_functions.begin(), leaf_functions.end(),
            [](const SampledFunction& a, const SampledFunction& b) {
              return a.function.start < b.function.start;
            });
  std::vector<EmbeddedFunction> sampled;
  for (size_t i = 0; i < leaf_functions.size();) {
    std::vector<uint64_t> samples;
    size_t next = i;
    for (; next < leaf_functions.size() &&
           leaf_functions[next].function.start == leaf_functions[i].function.start;
         ++next) {
      const std::vector<uint64_t>& more = leaf_functions[next].samples;
      if (more.size() > samples.size()) samples.resize(more.size(), 0);
      for (size_t e = 0; e < more.size(); ++e) samples[e] += more[e];
    }
    bool enough = limits.min_event_samples.empty();
    for (size_t e = 0; e < samples.size() && e < limits.min_event_samples.size(); ++e) {
      enough = enough || samples[e] >= limits.min_event_samples[e];
    }
    if (enough) {
      sampled.push_back(leaf_functions[i].function);
    } else {
      ++binary.code_omitted;
      ++limits.cold_functions;
    }
    i = next;
  }
  EmbedCode(sampled, RawFile(rows.binary()), limits, binary);
  if (!missed.empty()) LearnFrames(symbolizer, binary, missed, display_name, limits, *known);
  binary.Normalize();
  return binary;
}

}  // namespace sample
