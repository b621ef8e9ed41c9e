#include "report/views/stats_table.h"

#include <cstdlib>

#include <fmt/format.h>

namespace sample::report {
namespace {

constexpr StatsSectionInfo kSections[] = {
    {StatsSection::kProblems, "Problems", "", [](const LoadStats&) { return true; }},
    {StatsSection::kOffCpu, "Off-CPU", "off_cpu",
     [](const LoadStats& s) { return s.off_cpu.intervals != 0 || s.off_cpu.unmatched != 0; }},
};

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
    {"chain_limit", "", StatsSection::kProblems,
     [](const LoadStats& s) { return uint64_t{s.chain_limit}; }, "", nullptr, "", nullptr, true},
    {"frames", "", StatsSection::kProblems, [](const LoadStats& s) { return s.frames; }},
    {"unknown_frames", "unknown frames", StatsSection::kProblems,
     [](const LoadStats& s) { return s.unknown_frames; }, " of {} frames",
     [](const LoadStats& s) { return s.frames; }},
    {"missing_binaries", "missing binaries", StatsSection::kProblems,
     [](const LoadStats& s) { return s.missing_binaries; }},
    {"mismatched_binaries", "mismatched binaries", StatsSection::kProblems,
     [](const LoadStats& s) { return s.mismatched_binaries; }},
    {"intervals", "intervals", StatsSection::kOffCpu,
     [](const LoadStats& s) { return s.off_cpu.intervals; }},
    {"unmatched", "never switched in", StatsSection::kOffCpu,
     [](const LoadStats& s) { return s.off_cpu.unmatched; },
     " (left out: exited or recording ended)"},
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

std::string StatsLabel(const StatsCounter& counter, const LoadStats& stats) {
  if (counter.label_value == nullptr) return std::string(counter.label);
  return fmt::format(fmt::runtime(counter.label), counter.label_value(stats));
}

std::string StatsNote(const StatsCounter& counter, const LoadStats& stats) {
  if (counter.note_value == nullptr) return std::string(counter.note);
  const uint64_t n = counter.note_value(stats);
  if (n == 0 && !counter.note_if_zero.empty()) return std::string(counter.note_if_zero);
  return fmt::format(fmt::runtime(counter.note), n);
}

}  // namespace sample::report
