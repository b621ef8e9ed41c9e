// Text of --header / --header-only: the recording's facts as perf's '#'
// block, one "key : value" line each, an "event" line per recorded event.
#include "report/text/text_header.h"

#include <fmt/format.h>

#include "report/text/display_text.h"
#include "report/views/event_sections.h"
#include "report/views/stats_table.h"

namespace sample::report {
namespace {

void Line(std::string& out, std::string_view key, std::string_view value) {
  out += fmt::format("# {:<14} : {}\n", key, OneLine(value));
}

std::string EventLine(const EventInfo& e) {
  std::string line =
      fmt::format("name = {}, type = {} ({}), config = {:#x}, {} = {}", e.name, e.type, e.type_name,
                  e.config, e.freq ? "sample_freq" : "sample_period", e.period_or_freq);
  line += fmt::format(", sample_type = {}", e.sample_type_names);
  if (e.read_format != 0) line += fmt::format(", read_format = {}", e.read_format_names);
  if (e.chain_capture.mode != sample::ChainCapture::kNone) {
    line += fmt::format(", call-graph = {}", DescribeChainCapture(e.chain_capture));
  }
  if (e.sample_regs_user != 0)
    line += fmt::format(", sample_regs_user = {:#x}", e.sample_regs_user);
  if (e.exclude_callchain_user) line += ", exclude_callchain_user = 1";
  if (e.exclude_user) line += ", exclude_user = 1";
  if (e.exclude_kernel) line += ", exclude_kernel = 1";
  if (e.inherit) line += ", inherit = 1";
  for (const AttrField& f : e.attr_fields) {
    line += f.hex ? fmt::format(", {} = {:#x}", f.name, f.value)
                  : fmt::format(", {} = {}", f.name, f.value);
    if (!f.meaning.empty()) line += fmt::format(" ({})", f.meaning);
  }
  line += fmt::format(", ids = {}", e.ids);
  if (!e.group_members.empty()) {
    line += ", group members = {";
    for (size_t i = 0; i < e.group_members.size(); ++i) {
      line += (i == 0 ? " " : ", ") + e.group_members[i];
    }
    line += " }";
  }
  line += fmt::format(", samples = {}", e.samples);
  if (!e.filter.empty()) line += fmt::format(", filter = '{}'", e.filter);
  if (!e.trace_fields.empty()) line += fmt::format(", fields = {}", fmt::join(e.trace_fields, " "));
  return line;
}

// "task-clock 201336421, enabled 231.012 ms, running 231.012 ms (100.00%)",
// with the scaled count where the kernel multiplexed the counter.
std::string CountLine(const CountInfo& c) {
  if (!c.supported) return c.name + " <not supported>";
  std::string line = fmt::format("{} {}", c.name, c.count);
  if (c.scaled) line += fmt::format(" (scaled {:.0f})", *c.scaled);
  line += fmt::format(", enabled {:.3f} ms, running {:.3f} ms ({:.2f}%)", c.time_enabled / 1e6,
                      c.time_running / 1e6, c.running_pct);
  if (c.time_enabled == 0) line += " <not counted>";
  if (c.intervals != 0) line += fmt::format(", {} intervals", c.intervals);
  return line;
}

// "0.512 s to 1.020 s (0.508 s)", and the events on when not all were.
std::string PeriodLine(const ControlInfo::Period& p) {
  std::string line =
      fmt::format("{:.3f} s to {:.3f} s ({:.3f} s)", p.start_s, p.end_s, p.end_s - p.start_s);
  for (size_t i = 0; i < p.events.size(); ++i) {
    line += (i == 0 ? ", events on: " : ", ") + p.events[i];
  }
  return line;
}

}  // namespace

std::string ControlSummaryText(const ControlInfo& c) {
  return fmt::format("{} window{}, {:.3f} s of {:.3f} s", c.periods.size(),
                     c.periods.size() == 1 ? "" : "s", c.enabled_s, c.total_s);
}

std::string CountsSummaryText(const CountsInfo& c) {
  return fmt::format(
      "{} over {:.3f} s, {} of {} events multiplexed",
      c.from_counting ? "counted (sample-record --stat)" : "final counts of the sampling events",
      c.elapsed_s, c.multiplexed, c.events.size());
}

std::string ToggleText(const ToggleInfo& t) {
  std::string line = t.name + ":";
  if (!t.on_by.empty()) line += fmt::format(" on by {}", fmt::join(t.on_by, ", "));
  if (!t.off_by.empty()) {
    line += fmt::format("{} off by {}", t.on_by.empty() ? "" : ",", fmt::join(t.off_by, ", "));
  }
  line += t.per_cpu ? ", per CPU" : ", per thread";
  if (t.starts_on) line += ", starting on";
  line +=
      fmt::format("; {} windows; {} samples inside, {} outside ({})", t.windows, t.inside,
                  t.outside, t.applied ? "left out; --no-toggle keeps them" : "kept: --no-toggle");
  if (t.unmatched_off != 0) line += fmt::format("; {} offs while off", t.unmatched_off);
  return line;
}

std::string ThrottledText(const CpuCounts& counts) {
  if (counts.throttles == 0) return "";
  return fmt::format(", throttled {} time{} for {}", counts.throttles,
                     counts.throttles == 1 ? "" : "s", FormatNs(counts.throttled_ns));
}

std::string FileStateText(const HeaderView& h) {
  if (h.finalized) return fmt::format("finalized, {} bytes", h.file_size);
  return fmt::format("not finalized (recorder did not close it); recovered {} of {} bytes",
                     h.valid_end, h.file_size);
}

std::string FormatHeaderText(const HeaderView& h) {
  std::string out = "# ========\n";
  if (!h.start_time.empty()) Line(out, "captured on", h.start_time);
  Line(out, "hostname", h.hostname);
  Line(out, "os release", h.os_release);
  Line(out, "os version", h.os_version);
  Line(out, "arch", h.arch);
  Line(out, "nrcpus online", h.cpus_online);
  Line(out, "cmdline", h.cmdline);
  Line(out, "recorder", h.recorder_version);
  // sample.data files say nothing more (their goldens predate the line).
  if (!h.format.empty() && h.format != "sample.data") Line(out, "format", h.format);
  if (!h.kernel_symbols.empty()) Line(out, "kernel symbols", h.kernel_symbols);
  Line(out, "duration", fmt::format("{:.3f} s", h.duration_s));
  if (h.control) {
    Line(out, "enabled", ControlSummaryText(*h.control));
    for (const ControlInfo::Period& p : h.control->periods) Line(out, "window", PeriodLine(p));
  }
  for (const EventInfo& e : h.events) Line(out, "event", EventLine(e));
  Line(out, "samples", fmt::format("{}", h.samples));
  Line(out, StatsCounterByKey("lost_samples").label, fmt::format("{}", h.lost_samples));
  for (const auto& [cpu, counts] : h.per_cpu) {
    Line(out, fmt::format("cpu {}", cpu),
         fmt::format("{} samples, {} lost", counts.samples, counts.lost_samples) +
             ThrottledText(counts));
  }
  if (h.counts) {
    Line(out, "counts", CountsSummaryText(*h.counts));
    for (const CountInfo& c : h.counts->events) Line(out, "count", CountLine(c));
  }
  for (const ToggleInfo& t : h.toggles) Line(out, "toggled", ToggleText(t));
  for (const auto& [path, id] : h.build_ids) Line(out, "build-id", fmt::format("{} {}", id, path));
  for (const HeaderView::JitDumpInfo& j : h.jit_dumps) {
    Line(out, "jit code",
         fmt::format("{} named from its jitdump ({} function{}, {} move{})", j.dso, j.functions,
                     j.functions == 1 ? "" : "s", j.moves, j.moves == 1 ? "" : "s"));
  }
  Line(out, "file", FileStateText(h));
  out += "# ========\n#\n";
  return out;
}

}  // namespace sample::report
