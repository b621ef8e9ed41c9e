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
// recordings, so other recordings' output is unchanged. The unwinder's
// sections are the exception: JSON always has their object (scripts read
// its keys whatever the recording), text shows each only when it has
// samples. Consecutive sections with one JSON key share one object, whose
// keys come in the table's order; text prints each section's counters in
// that order under the section's title.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/load/recording.h"

namespace sample::report {

enum class StatsSection { kProblems, kOffCpu, kAlloc, kDwarfUnwinding, kLeafCheck, kJitDump };

struct StatsSectionInfo {
  StatsSection section;
  std::string_view title;     // the text's heading: "Problems"
  std::string_view json_key;  // the JSON object holding it; empty: the stats object itself
  bool (*shown)(const LoadStats&);
  bool json_always = false;  // in JSON even when `shown` is false
};

// A counter that is a set of named counts (the reasons walks ended): one
// text row each for those that are not 0 ("ended: no CFI"), a JSON object
// with all of them.
using StatsEntries = std::vector<std::pair<std::string, uint64_t>>;

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
  bool text_if_nonzero = false;  // left out of text when 0 (JSON has it)
  // A note that takes more than one value; replaces `note` when set.
  std::string (*note_text)(const LoadStats&) = nullptr;
  // Set for a counter of named counts; `value` is then their sum.
  StatsEntries (*entries)(const LoadStats&) = nullptr;
};

// In the order the views print them.
std::span<const StatsSectionInfo> StatsSections();
std::span<const StatsCounter> StatsCounters();
// The counter with JSON key `key`; it must be declared.
const StatsCounter& StatsCounterByKey(std::string_view key);

// Whether `counter` is shown for `stats` (only_if_nonzero), its text label
// and its text note; whether its section is shown in text and in JSON.
bool StatsShown(const StatsCounter& counter, const LoadStats& stats);
bool StatsShownInText(const StatsCounter& counter, const LoadStats& stats);
const StatsSectionInfo& StatsSectionOf(StatsSection section);
bool StatsSectionInJson(const StatsSectionInfo& section, const LoadStats& stats);
std::string StatsLabel(const StatsCounter& counter, const LoadStats& stats);
std::string StatsNote(const StatsCounter& counter, const LoadStats& stats);

}  // namespace sample::report
