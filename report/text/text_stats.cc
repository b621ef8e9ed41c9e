// Text of --stats: the loader's counts (records by type, per CPU), the
// counters of stats_table.h section by section (the unwinder's among them),
// then where symbols came from.
#include "report/text/text_stats.h"

#include <algorithm>

#include <fmt/format.h>

#include "libsample/percent.h"
#include "libsample/perf/perf_names.h"
#include "report/text/display_text.h"
#include "report/text/text_header.h"
#include "report/views/event_sections.h"
#include "report/views/stats_table.h"

namespace sample::report {
namespace {

void Row(std::string& out, std::string_view what, uint64_t n, std::string_view note = "") {
  out += fmt::format("{:>20}: {:>10}{}\n", what, n, note);
}

void RecordsText(std::string& out, const HeaderView& h, const LoadStats& stats) {
  out += fmt::format("{:>20} events: {:>10}\n", "TOTAL", stats.records);
  for (uint32_t type = 0; type < stats.records_by_type.size(); ++type) {
    const uint64_t n = stats.records_by_type[type];
    if (n == 0) continue;
    out += fmt::format("{:>20} events: {:>10}  ({:4.1f}%)\n", RecordTypeName(type), n,
                       Percentage(n, stats.records));
  }
  if (!stats.other_records.empty()) {
    // perf.data: perf's own records, and what no reader here understands.
    out += fmt::format("\nOther records of the {} format:\n", h.format);
    for (const auto& [what, n] : stats.other_records) {
      out += fmt::format("{:>34}: {:>10}\n", OneLine(what), n);
    }
  }
  out += "\nPer CPU:\n";
  for (const auto& [cpu, counts] : stats.per_cpu) {
    out += fmt::format("{:>20}: {:>10} samples, {} lost in {} LOST records",
                       fmt::format("cpu {}", cpu), counts.samples, counts.lost_samples,
                       counts.lost_records);
    out += ThrottledText(counts) + "\n";
  }
}

// The sections of stats_table.h, each counter with a label on a row of its
// own (the others are in their notes).
void CounterSectionsText(std::string& out, const LoadStats& stats) {
  for (const StatsSectionInfo& section : StatsSections()) {
    if (!section.shown(stats)) continue;
    out += fmt::format("\n{}:\n", section.title);
    for (const StatsCounter& c : StatsCounters()) {
      if (c.section != section.section || c.label.empty() || !StatsShownInText(c, stats)) continue;
      if (c.entries == nullptr) {
        Row(out, StatsLabel(c, stats), c.value(stats), StatsNote(c, stats));
        continue;
      }
      for (const auto& [name, n] : c.entries(stats)) {
        if (n != 0) Row(out, fmt::format("{}: {}", StatsLabel(c, stats), name), n);
      }
    }
  }
}

void CountsText(std::string& out, const CountsInfo& counts) {
  out += fmt::format("\nCounts ({}):\n", CountsSummaryText(counts));
  for (const CountInfo& c : counts.events) {
    if (!c.supported) {
      out += fmt::format("{:>20}: {:>14}\n", OneLine(c.name), "<not supported>");
      continue;
    }
    out += fmt::format("{:>20}: {:>14}  ran {:6.2f}% of the time enabled", OneLine(c.name), c.count,
                       c.running_pct);
    if (c.scaled) out += fmt::format(", scaled to {:.0f}", *c.scaled);
    out += "\n";
  }
}

// --alloc: the most live in each of at most 16 spans, with a bar.
void LiveBytesText(std::string& out, const LiveTimeline& timeline, uint64_t first_time) {
  const std::vector<uint64_t>& most = timeline.most;
  if (most.empty()) return;
  const size_t per_row = (most.size() + 15) / 16;
  const uint64_t row_ns = per_row * timeline.span_ns;
  const uint64_t top = *std::max_element(most.begin(), most.end());
  out += fmt::format("\nLive bytes over time (the most in each {}):\n", FormatNs(row_ns));
  const uint64_t offset = timeline.start > first_time ? timeline.start - first_time : 0;
  for (size_t i = 0; i < most.size(); i += per_row) {
    const uint64_t row = *std::max_element(
        most.begin() + static_cast<ptrdiff_t>(i),
        most.begin() + static_cast<ptrdiff_t>(std::min(i + per_row, most.size())));
    const size_t bar = top == 0 ? 0 : static_cast<size_t>(row * 40 / top);
    out += fmt::format("  {:>9.3f} s {:>12}  {}\n",
                       static_cast<double>(offset + i * timeline.span_ns) / 1e9, row,
                       std::string(bar, '#'));
  }
}

}  // namespace

std::string FormatStatsText(const HeaderView& h, const LoadStats& stats) {
  std::string out = "Aggregated stats:\n";
  RecordsText(out, h, stats);
  CounterSectionsText(out, stats);
  LiveBytesText(out, stats.alloc.timeline, stats.first_time);
  if (!stats.symbol_sources.empty()) {
    out += "\nSymbols from:\n";
    for (const auto& [path, source] : stats.symbol_sources) {
      out += fmt::format("  {}: {}\n", OneLine(path), OneLine(source));
    }
  }
  if (h.counts) CountsText(out, *h.counts);
  if (!h.toggles.empty()) {
    out += "\nToggles (on..off windows):\n";
    for (const ToggleInfo& t : h.toggles) out += fmt::format("  {}\n", ToggleText(t));
  }
  out += fmt::format("\nFile: {}\n", FileStateText(h));
  return out;
}

}  // namespace sample::report
