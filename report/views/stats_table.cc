#include "report/views/stats_table.h"

#include <cstdlib>

#include <fmt/format.h>

#include "libsample/symbols/address_frames.h"
#include "libsample/unwind/dwarf_unwinder.h"
#include "report/load/stack_unwinding.h"

namespace sample::report {
namespace {

constexpr StatsSectionInfo kSections[] = {
    {StatsSection::kProblems, "Problems", "", [](const LoadStats&) { return true; }},
    {StatsSection::kOffCpu, "Off-CPU", "off_cpu",
     [](const LoadStats& s) { return s.off_cpu.intervals != 0 || s.off_cpu.unmatched != 0; }},
    {StatsSection::kAlloc, "Allocations (--alloc)", "alloc",
     [](const LoadStats& s) {
       return s.alloc.pairs.allocations != 0 || s.alloc.pairs.unknown_frees != 0 ||
              s.alloc.pairs.unpaired != 0 || s.alloc.untracked != 0;
     }},
    {StatsSection::kDwarfUnwinding, "DWARF unwinding", "unwinding",
     [](const LoadStats& s) { return s.unwind.dwarf_samples != 0; }, true},
    {StatsSection::kLeafCheck, "Leaf check (-g, fp,leaf)", "unwinding",
     [](const LoadStats& s) { return s.unwind.leaf_samples != 0; }, true},
    {StatsSection::kJitDump, "JIT dumps", "jitdump",
     [](const LoadStats& s) { return s.jitdump.dumps != 0; }},
};

StatsEntries UnwindStops(const LoadStats& s) {
  StatsEntries entries;
  for (size_t i = 0; i < s.unwind.stops.size(); ++i) {
    entries.emplace_back(UnwindStopName(static_cast<UnwindStop>(i)), s.unwind.stops[i]);
  }
  return entries;
}

uint64_t Sum(const StatsEntries& entries) {
  uint64_t sum = 0;
  for (const auto& [name, n] : entries) sum += n;
  return sum;
}

std::string StackReadNote(const LoadStats& s) {
  return fmt::format(" bytes or less (all: {} or less) of {}-byte copies",
                     StackReachWithin(s.unwind, 1.0), s.unwind.stack_copy_size);
}

std::string TornDumpsNote(const LoadStats& s) {
  if (s.jitdump.torn_dumps == 0) return "";
  return fmt::format(" ({} ending in a record cut short: copied while their JIT ran)",
                     s.jitdump.torn_dumps);
}

std::string LeafReadNote(const LoadStats& s) {
  return fmt::format(" bytes or less (all: {} or less) of {}-byte copies",
                     LeafReachWithin(s.unwind, 1.0), s.unwind.leaf_copy_size);
}

constexpr StatsCounter kCounters[] = {
    {"lost_samples", "lost samples", StatsSection::kProblems,
     [](const LoadStats& s) { return s.lost_samples; }},
    {"malformed_records", "malformed records", StatsSection::kProblems,
     [](const LoadStats& s) { return s.malformed_records; }, " ({} of them samples)",
     [](const LoadStats& s) { return s.malformed_samples; }},
    {"malformed_samples", "", StatsSection::kProblems,
     [](const LoadStats& s) { return s.malformed_samples; }},
    {"saturated_periods", "periods saturated", StatsSection::kProblems,
     [](const LoadStats& s) { return s.saturated_periods; }},
    {"bad_chunks", "bad chunks skipped", StatsSection::kProblems,
     [](const LoadStats& s) { return s.bad_chunks; }},
    {"unknown_event_records", "unknown event ids", StatsSection::kProblems,
     [](const LoadStats& s) { return s.unknown_event_records; }},
    {"unknown_group_reads", "unknown group reads", StatsSection::kProblems,
     [](const LoadStats& s) { return s.unknown_group_reads; }},
    // Chains as deep as the kernel's limit; fp,leaf completes some of them
    // from the stack copy.
    {"cut_chains", "chains cut at {} frames", StatsSection::kProblems,
     [](const LoadStats& s) { return s.cut_chains; }, " ({} completed from the stack copy)",
     [](const LoadStats& s) { return s.unwind.cut_chains_completed; },
     " (their callers are missing: sample-record --max-stack)",
     [](const LoadStats& s) { return uint64_t{s.chain_limit}; }, true},
    {"junk_callers", "chains ended at a caller in no code", StatsSection::kProblems,
     [](const LoadStats& s) { return s.junk_callers; },
     " (junk words of frame-pointer walks through code without frame pointers)"},
    {"chain_limit", "", StatsSection::kProblems,
     [](const LoadStats& s) { return uint64_t{s.chain_limit}; }, "", nullptr, "", nullptr, true},
    {"frames", "", StatsSection::kProblems, [](const LoadStats& s) { return s.frames; }},
    {"unknown_frames", "unknown frames", StatsSection::kProblems,
     [](const LoadStats& s) { return s.unknown_frames; }, " of {} frames",
     [](const LoadStats& s) { return s.frames; }},
    // Addresses whose inline chains were deeper than the report shows
    // (kMaxInlineDepth: a crafted file's); shown only when there were any.
    {"cut_inline_chains", "inline chains cut at {} frames", StatsSection::kProblems,
     [](const LoadStats& s) { return s.cut_inline_chains; },
     " (addresses; their innermost calls and the function holding them kept)", nullptr, "",
     [](const LoadStats&) { return uint64_t{kMaxInlineDepth}; }, true},
    {"missing_binaries", "missing binaries", StatsSection::kProblems,
     [](const LoadStats& s) { return s.missing_binaries; }},
    {"mismatched_binaries", "mismatched binaries", StatsSection::kProblems,
     [](const LoadStats& s) { return s.mismatched_binaries; }},
    {"intervals", "intervals", StatsSection::kOffCpu,
     [](const LoadStats& s) { return s.off_cpu.intervals; }},
    {"unmatched", "never switched in", StatsSection::kOffCpu,
     [](const LoadStats& s) { return s.off_cpu.unmatched; },
     " (left out: exited or recording ended)"},
    {"allocations", "allocations", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.pairs.allocations; }, " ({} bytes)",
     [](const LoadStats& s) { return s.alloc.pairs.allocated_bytes; }},
    {"frees", "frees", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.pairs.frees; }},
    {"unknown_frees", "unknown frees", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.pairs.unknown_frees; },
     " (allocated before the recording, or left out of it)"},
    {"foreign_unmaps", "foreign unmaps", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.pairs.foreign_unmaps; },
     " (munmap of files, or of memory mapped before the recording)"},
    {"nested", "nested calls", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.pairs.nested; },
     " (inside another probed call: counted once, as the outer)"},
    {"failed", "failed", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.pairs.failed; }, " (returned NULL)"},
    {"unpaired", "unpaired calls", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.pairs.unpaired; },
     " (never returned: a lost record, or the thread ended)"},
    {"leaked_blocks", "live at the end", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.pairs.live_blocks; }, " blocks ({} bytes)",
     [](const LoadStats& s) { return s.alloc.pairs.live_bytes; }},
    {"peak_bytes", "peak live bytes", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.pairs.peak_bytes; }},
    {"untracked", "untracked blocks", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.untracked; }, " ({} bytes of posix_memalign)",
     [](const LoadStats& s) { return s.alloc.untracked_bytes; }, "", nullptr, true},
    {.key = "outside_all_on",
     .label = "not all probes on",
     .section = StatsSection::kAlloc,
     .value = [](const LoadStats& s) { return s.alloc.outside_on; },
     .note = " (calls and frees left out: the probes were switched on or off one by one)",
     .only_if_nonzero = true},
    {"malformed_payloads", "bad payloads", StatsSection::kAlloc,
     [](const LoadStats& s) { return s.alloc.malformed; }, "", nullptr, "", nullptr, true},
    // The unwinder's: --call-graph dwarf walks, then fp,leaf's leaf check.
    {.key = "dwarf_samples",
     .label = "samples unwound",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return s.unwind.dwarf_samples; },
     .note = ", {} user frames",
     .note_value = [](const LoadStats& s) { return s.unwind.dwarf_frames; }},
    {.key = "dwarf_frames",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return s.unwind.dwarf_frames; }},
    {.key = "ended",
     .label = "ended",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return Sum(UnwindStops(s)); },
     .entries = UnwindStops},
    {.key = "missing_binaries",
     .label = "binaries not found",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return s.unwind.missing_binaries; },
     .text_if_nonzero = true},
    {.key = "unopened_binaries",
     .label = "binaries not opened",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return s.unwind.unopened_modules; },
     .text_if_nonzero = true},
    {.key = "embedded_binaries",
     .label = "binaries unwound with the recording's CFI",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return s.unwind.embedded_binaries; },
     .only_if_nonzero = true},
    // libdw cannot read the embedded CFI: a walk that needed libdw's own
    // walker there (a frame the cached rules cannot step) ends there.
    {.key = "embedded_cut_walks",
     .label = "walks ended in embedded CFI",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return s.unwind.embedded_cut_walks; },
     .note = " (a frame there needed libdw, which reads only files)",
     .only_if_nonzero = true},
    {.key = "cached_walks",
     .label = "walks, cached rules",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return s.unwind.cached_walks; }},
    {.key = "libdw_walks",
     .label = "walks, libdw",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return s.unwind.libdw_walks; }},
    {.key = "leaf_samples",
     .label = "samples checked",
     .section = StatsSection::kLeafCheck,
     .value = [](const LoadStats& s) { return s.unwind.leaf_samples; }},
    {.key = "leaf_callers_inserted",
     .label = "samples with callers inserted",
     .section = StatsSection::kLeafCheck,
     .value = [](const LoadStats& s) { return s.unwind.leaf_callers_inserted; },
     .note = ", {} frames inserted",
     .note_value = [](const LoadStats& s) { return s.unwind.leaf_frames_inserted; }},
    {.key = "leaf_frames_inserted",
     .section = StatsSection::kLeafCheck,
     .value = [](const LoadStats& s) { return s.unwind.leaf_frames_inserted; }},
    {.key = "leaf_steps_joined",
     .label = "checks that reached the chain",
     .section = StatsSection::kLeafCheck,
     .value = [](const LoadStats& s) { return s.unwind.leaf_steps_joined; }},
    // Steps that needed more of the copy, to find a skipped frame or to
    // confirm the chain's caller (Go's CFI never says a frame is rbp-based:
    // a framed function's frame is read to find its return address).
    {.key = "leaf_stack_too_small",
     .label = "checks cut short by the stack copy",
     .section = StatsSection::kLeafCheck,
     .value = [](const LoadStats& s) { return s.unwind.leaf_stack_too_small; }},
    {.key = "leaf_copy_size",
     .section = StatsSection::kLeafCheck,
     .value = [](const LoadStats& s) { return uint64_t{s.unwind.leaf_copy_size}; }},
    {.key = "leaf_read_p99",
     .label = "stack read to find them, 99% of samples",
     .section = StatsSection::kLeafCheck,
     .value = [](const LoadStats& s) { return LeafReachWithin(s.unwind, 0.99); },
     .text_if_nonzero = true,
     .note_text = LeafReadNote},
    {.key = "leaf_read_max",
     .section = StatsSection::kLeafCheck,
     .value = [](const LoadStats& s) { return LeafReachWithin(s.unwind, 1.0); }},
    // In text, the note of cut_chains (Problems).
    {.key = "cut_chains_completed",
     .section = StatsSection::kLeafCheck,
     .value = [](const LoadStats& s) { return s.unwind.cut_chains_completed; }},
    {.key = "stack_copy_size",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return uint64_t{s.unwind.stack_copy_size}; }},
    {.key = "stack_read_p99",
     .label = "stack read, 99% of complete walks",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return StackReachWithin(s.unwind, 0.99); },
     .text_if_nonzero = true,
     .note_text = StackReadNote},
    {.key = "stack_read_max",
     .section = StatsSection::kDwarfUnwinding,
     .value = [](const LoadStats& s) { return StackReachWithin(s.unwind, 1.0); }},
    // The recording's jitdumps (names of JIT code, for processes that wrote one).
    {.key = "dumps",
     .label = "jitdumps",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.dumps; },
     .note_text = TornDumpsNote},
    {.key = "torn_dumps",
     .label = "",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.torn_dumps; }},
    {.key = "functions",
     .label = "functions (code loads)",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.functions; }},
    {.key = "moves",
     .label = "code moves",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.records.moves; }},
    {.key = "debug_infos",
     .label = "debug-info records",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.records.debug_infos; }},
    {.key = "malformed_records",
     .label = "malformed records",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.records.malformed; }},
    {.key = "unknown_records",
     .label = "records of unknown ids",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.records.unknown; },
     .text_if_nonzero = true},
    {.key = "unmatched_moves",
     .label = "moves of no loaded code",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.code.unmatched_moves; },
     .text_if_nonzero = true},
    {.key = "unmatched_debug_infos",
     .label = "debug info of no code load",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.records.unmatched_debug_infos; },
     .text_if_nonzero = true},
    {.key = "untimed_dumps",
     .label = "dumps timed by the CPU's counter",
     .section = StatsSection::kJitDump,
     .value = [](const LoadStats& s) { return s.jitdump.code.untimed_dumps; },
     .note = " (their code taken as loaded from the start)",
     .text_if_nonzero = true},
};

}  // namespace

std::span<const StatsSectionInfo> StatsSections() { return kSections; }

std::span<const StatsCounter> StatsCounters() { return kCounters; }

const StatsCounter& StatsCounterByKey(std::string_view key) {
  for (const StatsCounter& c : kCounters) {
    if (c.key == key) return c;
  }
  std::abort();  // a key not in the table is a programming error
}

bool StatsShown(const StatsCounter& counter, const LoadStats& stats) {
  return !counter.only_if_nonzero || counter.value(stats) != 0;
}

bool StatsShownInText(const StatsCounter& counter, const LoadStats& stats) {
  return StatsShown(counter, stats) && (!counter.text_if_nonzero || counter.value(stats) != 0);
}

const StatsSectionInfo& StatsSectionOf(StatsSection section) {
  for (const StatsSectionInfo& s : kSections) {
    if (s.section == section) return s;
  }
  std::abort();  // every section is declared
}

bool StatsSectionInJson(const StatsSectionInfo& section, const LoadStats& stats) {
  return section.json_always || section.shown(stats);
}

std::string StatsLabel(const StatsCounter& counter, const LoadStats& stats) {
  if (counter.label_value == nullptr) return std::string(counter.label);
  return fmt::format(fmt::runtime(counter.label), counter.label_value(stats));
}

std::string StatsNote(const StatsCounter& counter, const LoadStats& stats) {
  if (counter.note_text != nullptr) return counter.note_text(stats);
  if (counter.note_value == nullptr) return std::string(counter.note);
  const uint64_t n = counter.note_value(stats);
  if (n == 0 && !counter.note_if_zero.empty()) return std::string(counter.note_if_zero);
  return fmt::format(fmt::runtime(counter.note), n);
}

}  // namespace sample::report
