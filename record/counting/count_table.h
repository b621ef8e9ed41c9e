// The counting mode's output (sample-record --stat): the values read from
// the counters and their formatting as perf stat lays them out, as a table
// for people, CSV-like lines (-x SEP) or JSON lines (-j). Pure functions of
// their input, so every layout is tested with exact text; the counting
// itself is in stat_session.cc. Owns nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sample::record {

// One event's totals, summed over every fd it was opened on.
struct CountedEvent {
  std::string name;
  bool supported = true;  // false: the kernel has no such event here
  uint64_t count = 0;     // raw, as read
  uint64_t enabled = 0;   // ns the event was enabled
  uint64_t running = 0;   // ns it was on a counter (< enabled when multiplexed)
  // With -r: relative standard deviation of the mean of the scaled counts
  // over the runs, in percent.
  std::optional<double> spread_pct;
};

// The count an event would have had running all the time it was enabled:
// count * enabled / running, nullopt when it never ran ("<not counted>").
std::optional<double> ScaledCount(const CountedEvent& c);

// "msec" for the clock events (their count is nanoseconds, shown as
// milliseconds), "" for the rest, as perf.
std::string CountUnit(const std::string& name);

// A derived figure beside a count: "0.374 CPUs utilized", "1.23 insn per
// cycle", "4.56% of all branches", "292.099 /sec".
struct CountMetric {
  double value = 0;
  std::string unit;
};

// The metric of `events[index]`, computed from the other events of the
// same table where the ratio needs them; `elapsed_ns` is the wall time the
// counts cover.
std::optional<CountMetric> MetricOf(const std::vector<CountedEvent>& events, size_t index,
                                    uint64_t elapsed_ns);

// 1234567 -> "1,234,567".
std::string WithThousands(uint64_t n);

// Relative standard deviation of the mean of `values`, in percent (as
// perf stat -r reports it): sqrt(var / n) / mean * 100, var with n - 1.
double SpreadPercent(const std::vector<double>& values);

enum class CountFormat { kTable, kSeparated, kJson };

struct CountLayout {
  CountFormat format = CountFormat::kTable;
  std::string separator = ",";  // -x
};

// The lines of one table's events (no heading, no elapsed time), each
// ending in '\n'. `interval_s`, when given, starts each line with the
// interval's timestamp (-I).
std::string FormatCounts(const std::vector<CountedEvent>& events, uint64_t elapsed_ns,
                         const CountLayout& layout, std::optional<double> interval_s = {});

// Wall time and the child's CPU time of a run (or the mean of -r runs).
struct CountTimes {
  double elapsed_s = 0;
  std::optional<double> elapsed_spread_s;  // -r: the standard deviation of the mean
  std::optional<double> user_s, sys_s;     // a command's rusage
};

// The whole table perf stat prints at the end: heading naming what was
// counted ("'split 0.3'", "system wide", "process id '42'"), the counts,
// then the times. `runs` > 1 adds "(N runs)".
std::string FormatCountTable(const std::string& target, const std::vector<CountedEvent>& events,
                             const CountTimes& times, int runs);

// The heading of -I's table lines.
std::string IntervalHeading();

}  // namespace sample::record
