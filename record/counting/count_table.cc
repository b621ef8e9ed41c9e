#include "record/counting/count_table.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "libsample/percent.h"

namespace sample::record {
namespace {

// The generic name an event is known by, without modifiers or terms
// ("cycles:u" -> "cycles"), to find the partners of a ratio.
std::string GenericEventName(const std::string& name) {
  return name.substr(0, std::min(name.find(':'), name.find('/')));
}

bool IsClock(const std::string& name) {
  const std::string base = GenericEventName(name);
  return base == "task-clock" || base == "cpu-clock";
}

const CountedEvent* Find(const std::vector<CountedEvent>& events, const std::string& base) {
  for (const CountedEvent& e : events) {
    if (GenericEventName(e.name) == base && ScaledCount(e)) return &e;
  }
  return nullptr;
}

// `part` as a share of `whole`, when both were counted.
std::optional<CountMetric> Percent(const CountedEvent& part, const CountedEvent* whole,
                                   const char* unit) {
  if (whole == nullptr || *ScaledCount(*whole) == 0) return std::nullopt;
  return CountMetric{100.0 * *ScaledCount(part) / *ScaledCount(*whole), unit};
}

// Events per second of task-clock time, in perf's steps of a thousand.
std::optional<CountMetric> Rate(double count, const CountedEvent* clock) {
  if (clock == nullptr || *ScaledCount(*clock) == 0) return std::nullopt;
  const double per_second = count * 1e9 / *ScaledCount(*clock);
  if (per_second >= 1e9) return CountMetric{per_second / 1e9, "G/sec"};
  if (per_second >= 1e6) return CountMetric{per_second / 1e6, "M/sec"};
  if (per_second >= 1e3) return CountMetric{per_second / 1e3, "K/sec"};
  return CountMetric{per_second, "/sec"};
}

// The count column: "<not supported>", "<not counted>", milliseconds with
// two decimals for clocks, else the scaled count rounded, with separators
// in the table and without in machine output.
std::string CountText(const CountedEvent& e, bool thousands, int decimals) {
  if (!e.supported) return "<not supported>";
  const auto scaled = ScaledCount(e);
  if (!scaled) return "<not counted>";
  if (IsClock(e.name)) {
    const double ms = *scaled / 1e6;
    if (!thousands) return fmt::format("{:.{}f}", ms, decimals == 0 ? 2 : decimals);
    const auto whole = static_cast<uint64_t>(ms);
    const std::string fraction = fmt::format("{:.2f}", ms - static_cast<double>(whole));
    // "0.995" rounds to "1.00": carry into the whole part.
    if (fraction[0] == '1') return WithThousands(whole + 1) + ".00";
    return WithThousands(whole) + fraction.substr(1);
  }
  const auto rounded = static_cast<uint64_t>(std::llround(*scaled));
  if (decimals > 0) return fmt::format("{:.{}f}", static_cast<double>(rounded), decimals);
  return thousands ? WithThousands(rounded) : fmt::format("{}", rounded);
}

double RunningPercent(const CountedEvent& e) {
  if (!e.supported || e.enabled == 0) return e.supported ? 0 : 100;
  return Percentage(e.running, e.enabled);
}

std::string TableLine(const std::vector<CountedEvent>& events, size_t i, uint64_t elapsed_ns) {
  const CountedEvent& e = events[i];
  std::string line =
      fmt::format("{:>18} {:<4} {:<32}", CountText(e, true, 0), CountUnit(e.name), e.name);
  std::string metric;
  if (auto m = e.supported ? MetricOf(events, i, elapsed_ns) : std::nullopt) {
    const bool percent = !m->unit.empty() && m->unit[0] == '%';
    metric = percent ? fmt::format(" # {:>8.2f}{}", m->value, m->unit)
                     : fmt::format(" # {:>8.3f} {}", m->value, m->unit);
  }
  std::string tail;
  if (e.supported && e.running != 0 && e.running < e.enabled) {
    tail += fmt::format("  ({:.2f}%)", RunningPercent(e));
  }
  if (e.spread_pct) tail += fmt::format("  ( +- {:5.2f}% )", *e.spread_pct);
  line += tail.empty() ? metric : fmt::format("{:<35}", metric) + tail;
  line.erase(line.find_last_not_of(' ') + 1);
  return line + "\n";
}

std::string SeparatedLine(const std::vector<CountedEvent>& events, size_t i, uint64_t elapsed_ns,
                          const std::string& sep, std::optional<double> interval_s) {
  const CountedEvent& e = events[i];
  std::string line;
  if (interval_s) line += fmt::format("{:>16.9f}{}", *interval_s, sep);
  line += CountText(e, false, 0) + sep + CountUnit(e.name) + sep + e.name + sep;
  if (e.spread_pct) line += fmt::format("{:.2f}%{}", *e.spread_pct, sep);
  line += fmt::format("{}{}{:.2f}{}", e.running, sep, RunningPercent(e), sep);
  if (auto m = e.supported ? MetricOf(events, i, elapsed_ns) : std::nullopt) {
    line += fmt::format("{:.3f}{}{}", m->value, sep, m->unit);
  } else {
    line += sep;
  }
  return line + "\n";
}

// JSON strings here are event names and units; names may hold quotes or
// backslashes (a tracepoint filter is not part of a name, but r"..." is).
std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string JsonLine(const std::vector<CountedEvent>& events, size_t i, uint64_t elapsed_ns,
                     std::optional<double> interval_s) {
  const CountedEvent& e = events[i];
  std::string line = "{";
  if (interval_s) line += fmt::format("\"interval\" : {:.9f}, ", *interval_s);
  line += fmt::format("\"counter-value\" : {}, \"unit\" : {}, \"event\" : {}, ",
                      JsonString(CountText(e, false, 6)), JsonString(CountUnit(e.name)),
                      JsonString(e.name));
  if (e.spread_pct) line += fmt::format("\"variance\" : {:.2f}, ", *e.spread_pct);
  const auto m = e.supported ? MetricOf(events, i, elapsed_ns) : std::nullopt;
  line += fmt::format(
      "\"event-runtime\" : {}, \"pcnt-running\" : {:.2f}, \"metric-value\" : {:.6f}, "
      "\"metric-unit\" : {}}}\n",
      e.running, RunningPercent(e), m ? m->value : 0.0, JsonString(m ? m->unit : ""));
  return line;
}

}  // namespace

std::optional<double> ScaledCount(const CountedEvent& c) {
  if (!c.supported || c.running == 0) return std::nullopt;
  if (c.running >= c.enabled) return static_cast<double>(c.count);
  // long double: count * enabled overflows nothing, and keeps 64 bits.
  return static_cast<double>(static_cast<long double>(c.count) * c.enabled / c.running);
}

std::string CountUnit(const std::string& name) { return IsClock(name) ? "msec" : ""; }

std::optional<CountMetric> MetricOf(const std::vector<CountedEvent>& events, size_t index,
                                    uint64_t elapsed_ns) {
  const CountedEvent& e = events[index];
  const auto count = ScaledCount(e);
  if (!count) return std::nullopt;
  const std::string base = GenericEventName(e.name);
  const CountedEvent* clock = Find(events, "task-clock");
  if (base == "task-clock") {
    if (elapsed_ns == 0) return std::nullopt;
    return CountMetric{*count / static_cast<double>(elapsed_ns), "CPUs utilized"};
  }
  if (base == "cpu-clock") return std::nullopt;
  if (base == "instructions") {
    const CountedEvent* cycles = Find(events, "cycles");
    if (cycles == nullptr || *ScaledCount(*cycles) == 0) return std::nullopt;
    return CountMetric{*count / *ScaledCount(*cycles), "insn per cycle"};
  }
  if (base == "cycles") {
    if (clock == nullptr || *ScaledCount(*clock) == 0) return std::nullopt;
    return CountMetric{*count / *ScaledCount(*clock), "GHz"};
  }
  if (base == "cache-misses")
    return Percent(e, Find(events, "cache-references"), "% of all cache refs");
  if (base == "branch-misses") return Percent(e, Find(events, "branches"), "% of all branches");
  return Rate(*count, clock);
}

std::string WithThousands(uint64_t n) {
  std::string digits = fmt::format("{}", n);
  for (size_t i = digits.size(); i > 3; i -= 3) digits.insert(i - 3, ",");
  return digits;
}

double SpreadPercent(const std::vector<double>& values) {
  const double n = static_cast<double>(values.size());
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v / n;
  if (mean == 0) return 0;
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / (n - 1) / n) / mean * 100;
}

std::string FormatCounts(const std::vector<CountedEvent>& events, uint64_t elapsed_ns,
                         const CountLayout& layout, std::optional<double> interval_s) {
  std::string out;
  for (size_t i = 0; i < events.size(); ++i) {
    switch (layout.format) {
      case CountFormat::kTable:
        if (interval_s) out += fmt::format("{:>16.9f} ", *interval_s);
        out += TableLine(events, i, elapsed_ns);
        break;
      case CountFormat::kSeparated:
        out += SeparatedLine(events, i, elapsed_ns, layout.separator, interval_s);
        break;
      case CountFormat::kJson:
        out += JsonLine(events, i, elapsed_ns, interval_s);
        break;
    }
  }
  return out;
}

std::string FormatCountTable(const std::string& target, const std::vector<CountedEvent>& events,
                             const CountTimes& times, int runs) {
  std::string out = fmt::format("\n Performance counter stats for {}", target);
  out += runs > 1 ? fmt::format(" ({} runs):\n\n", runs) : ":\n\n";
  const auto elapsed_ns = static_cast<uint64_t>(times.elapsed_s * 1e9);
  out += FormatCounts(events, elapsed_ns, {});
  if (times.elapsed_spread_s) {
    const double pct = times.elapsed_s > 0 ? *times.elapsed_spread_s / times.elapsed_s * 100 : 0;
    out += fmt::format("\n{:>18.5f} +- {:.5f} seconds time elapsed  ( +- {:5.2f}% )\n",
                       times.elapsed_s, *times.elapsed_spread_s, pct);
  } else {
    out += fmt::format("\n{:>18.9f} seconds time elapsed\n", times.elapsed_s);
  }
  if (times.user_s && times.sys_s) {
    out += fmt::format("\n{:>18.9f} seconds user\n{:>18.9f} seconds sys\n", *times.user_s,
                       *times.sys_s);
  }
  return out + "\n";
}

std::string IntervalHeading() { return "#           time             counts unit events\n"; }

}  // namespace sample::record
