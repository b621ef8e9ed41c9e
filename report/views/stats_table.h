// The counters --stats shows, each declared once: its JSON key, its text
// label and the section it belongs to, read by the text printer
// (text_stats.cc), the JSON printer and --header (for the counters the
// header repeats), so the views cannot drift apart (as Perfetto's stats.h
// declares every stat once for the trace processor, its tables and its UI).
//
// A counter whose text label is empty is shown in text only inside another
// counter's note ("malformed records: 3 (1 of them samples)"); JSON gives
// every counter a key of its own. A section is shown (in text and JSON
// alike) only when its predicate holds: the off-CPU block only for off-CPU
// recordings, so other recordings' output is unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "report/load/recording.h"

namespace sample::report {

enum class StatsSection { kProblems, kOffCpu };

struct StatsSectionInfo {
  StatsSection section;
  std::string_view title;     // the text's heading: "Problems"
  std::string_view json_key;  // the JSON object holding it; empty: the stats object itself
  bool (*shown)(const LoadStats&);
};

struct StatsCounter {
  std::string_view key;    // JSON: "malformed_records"
  std::string_view label;  // text: "malformed records"; "{}" takes label_value
  StatsSection section;
  uint64_t (*value)(const LoadStats&);
  // Text after the value; "{}" takes note_value, and note_if_zero replaces
  // the note when note_value is 0 (when not empty).
  std::string_view note = "";
  uint64_t (*note_value)(const LoadStats&) = nullptr;
  std::string_view note_if_zero = "";
  uint64_t (*label_value)(const LoadStats&) = nullptr;
  bool only_if_nonzero = false;  // left out of text and JSON when 0
};

// In the order the views print them.
std::span<const StatsSectionInfo> StatsSections();
std::span<const StatsCounter> StatsCounters();
// The counter with JSON key `key`; it must be declared.
const StatsCounter& StatsCounterByKey(std::string_view key);

// Whether `counter` is shown for `stats` (only_if_nonzero), its text label
// and its text note.
bool StatsShown(const StatsCounter& counter, const LoadStats& stats);
std::string StatsLabel(const StatsCounter& counter, const LoadStats& stats);
std::string StatsNote(const StatsCounter& counter, const LoadStats& stats);

}  // namespace sample::report
