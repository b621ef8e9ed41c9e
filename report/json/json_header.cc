// The JSON of --header and --stats: JsonPrinter's "header" and "stats"
// objects, from the HeaderView and the loader's stats; the counters of
// stats_table.h by their declared keys.
#include <fmt/format.h>

#include "libsample/perf/perf_names.h"
#include "report/json/json_printer.h"
#include "report/load/stack_unwinding.h"
#include "report/views/stats_table.h"

namespace sample::report {
void JsonPrinter::Header(const HeaderView& h) {
  json_.Key("header").BeginObject();
  json_.Field("hostname", h.hostname)
      .Field("os_release", h.os_release)
      .Field("os_version", h.os_version)
      .Field("arch", h.arch)
      .Field("cpus_online", h.cpus_online)
      .Field("cmdline", h.cmdline)
      .Field("recorder_version", h.recorder_version);
  if (!h.format.empty() && h.format != "sample.data") json_.Field("format", h.format);
  if (!h.kernel_symbols.empty()) json_.Field("kernel_symbols", h.kernel_symbols);
  json_.Key("start_realtime_ns");
  if (h.start_realtime_ns) {
    json_.Uint(*h.start_realtime_ns);
  } else {
    json_.Null();
  }
  json_.Field("start_time", h.start_time);
  json_.Key("duration_s").Double(h.duration_s, 6);
  json_.Key("events").BeginArray();
  for (const EventInfo& e : h.events) Event(e);
  json_.EndArray();
  json_.Field("samples", h.samples).Field(StatsCounterByKey("lost_samples").key, h.lost_samples);
  json_.Key("per_cpu").BeginArray();
  for (const auto& [cpu, counts] : h.per_cpu) {
    json_.BeginObject()
        .Field("cpu", cpu)
        .Field("samples", counts.samples)
        .Field("lost_samples", counts.lost_samples);
    if (counts.throttles != 0) {
      json_.Field("throttles", counts.throttles).Field("throttled_ns", counts.throttled_ns);
    }
    json_.EndObject();
  }
  json_.EndArray();
  json_.Key("build_ids").BeginArray();
  for (const auto& [path, id] : h.build_ids) {
    json_.BeginObject().Field("path", path).Field("build_id", id).EndObject();
  }
  json_.EndArray();
  if (!h.jit_dumps.empty()) {
    json_.Key("jitdumps").BeginArray();
    for (const HeaderView::JitDumpInfo& j : h.jit_dumps) {
      json_.BeginObject()
          .Field("dso", j.dso)
          .Field("functions", j.functions)
          .Field("moves", j.moves)
          .EndObject();
    }
    json_.EndArray();
  }
  json_.Field("finalized", h.finalized)
      .Field("file_size", h.file_size)
      .Field("valid_end", h.valid_end);
  if (h.counts) Counts(*h.counts);
  // Only in files with toggles, so older files' JSON is unchanged.
  if (!h.toggles.empty()) Toggles(h.toggles);
  if (h.control) Control(*h.control);
  json_.EndObject();
}

void JsonPrinter::Event(const EventInfo& e) {
  json_.BeginObject()
      .Field("name", e.name)
      .Field("type", e.type)
      .Field("type_name", e.type_name)
      .Field("config", Hex(e.config))
      .Field("freq", e.freq)
      .Field(e.freq ? "sample_freq" : "sample_period", e.period_or_freq)
      .Field("sample_type", e.sample_type_names)
      .Field("read_format", e.read_format_names)
      .Field("call_graph", ChainCaptureName(e.chain_capture))
      .Field("stack_size", e.chain_capture.stack_size)
      .Field("sample_regs_user", Hex(e.sample_regs_user))
      .Field("exclude_callchain_user", e.exclude_callchain_user)
      .Field("exclude_user", e.exclude_user)
      .Field("exclude_kernel", e.exclude_kernel)
      .Field("inherit", e.inherit);
  json_.Key("attr").BeginObject();
  for (const AttrField& f : e.attr_fields) {
    if (f.hex) {
      json_.Field(f.name, Hex(f.value));
    } else {
      json_.Field(f.name, f.value);
    }
  }
  json_.EndObject();
  json_.Field("ids", e.ids).Field("samples", e.samples);
  json_.Key("group_members").BeginArray();
  for (const std::string& m : e.group_members) json_.String(m);
  json_.EndArray();
  if (e.tracepoint) {
    json_.Field("filter", e.filter);
    json_.Key("trace_fields").BeginArray();
    for (const std::string& f : e.trace_fields) json_.String(f);
    json_.EndArray();
  }
  json_.EndObject();
}

void JsonPrinter::Toggles(const std::vector<ToggleInfo>& toggles) {
  json_.Key("toggles").BeginArray();
  for (const ToggleInfo& t : toggles) {
    json_.BeginObject().Field("event", t.name);
    json_.Key("on_by").BeginArray();
    for (const std::string& n : t.on_by) json_.String(n);
    json_.EndArray().Key("off_by").BeginArray();
    for (const std::string& n : t.off_by) json_.String(n);
    json_.EndArray();
    json_.Field("scope", t.per_cpu ? "cpu" : "thread")
        .Field("starts_on", t.starts_on)
        .Field("windows", t.windows)
        .Field("samples_inside", t.inside)
        .Field("samples_outside", t.outside)
        .Field("offs_while_off", t.unmatched_off)
        .Field("applied", t.applied)
        .EndObject();
  }
  json_.EndArray();
}

// Only in files with switches (-D, --control), so older files' JSON is
// unchanged.
void JsonPrinter::Control(const ControlInfo& control) {
  json_.Key("enabled").BeginObject();
  json_.Key("enabled_s").Double(control.enabled_s, 6);
  json_.Key("total_s").Double(control.total_s, 6);
  json_.Key("windows").BeginArray();
  for (const ControlInfo::Period& w : control.periods) {
    json_.BeginObject();
    json_.Key("start_s").Double(w.start_s, 6);
    json_.Key("end_s").Double(w.end_s, 6);
    json_.Key("events").BeginArray();
    for (const std::string& e : w.events) json_.String(e);
    json_.EndArray().EndObject();
  }
  json_.EndArray().EndObject();
}

// Only in files that have counts, so older files' JSON is unchanged.
void JsonPrinter::Counts(const CountsInfo& counts) {
  json_.Key("counts").BeginObject();
  json_.Field("source", counts.from_counting ? "counting" : "sampling");
  json_.Key("elapsed_s").Double(counts.elapsed_s, 6);
  json_.Field("multiplexed", counts.multiplexed);
  json_.Key("events").BeginArray();
  for (const CountInfo& c : counts.events) {
    json_.BeginObject()
        .Field("name", c.name)
        .Field("supported", c.supported)
        .Field("count", c.count)
        .Field("time_enabled", c.time_enabled)
        .Field("time_running", c.time_running);
    json_.Key("running_pct").Double(c.running_pct, 2);
    json_.Key("scaled_count");
    if (c.scaled) {
      json_.Double(*c.scaled, 0);
    } else {
      json_.Null();
    }
    json_.Field("intervals", c.intervals);
    json_.EndObject();
  }
  json_.EndArray().EndObject();
}

void JsonPrinter::Stats(const HeaderView& h, const LoadStats& stats) {
  json_.Key("stats").BeginObject();
  json_.Field("records", stats.records);
  json_.Key("records_by_type").BeginObject();
  for (uint32_t type = 0; type < stats.records_by_type.size(); ++type) {
    if (stats.records_by_type[type] != 0) {
      json_.Field(RecordTypeName(type), stats.records_by_type[type]);
    }
  }
  json_.EndObject();
  // Only for formats with records of their own (perf.data).
  if (!stats.other_records.empty()) {
    json_.Key("other_records").BeginObject();
    for (const auto& [what, n] : stats.other_records) json_.Field(what, n);
    json_.EndObject();
  }
  json_.Field("samples", stats.samples);
  json_.Key("per_cpu").BeginArray();
  for (const auto& [cpu, counts] : stats.per_cpu) {
    json_.BeginObject()
        .Field("cpu", cpu)
        .Field("samples", counts.samples)
        .Field("lost_samples", counts.lost_samples)
        .Field("lost_records", counts.lost_records);
    if (counts.throttles != 0) {
      json_.Field("throttles", counts.throttles).Field("throttled_ns", counts.throttled_ns);
    }
    json_.EndObject();
  }
  json_.EndArray();
  StatsSectionsJson(stats);
  json_.Key("symbol_sources").BeginObject();
  for (const auto& [path, source] : stats.symbol_sources) json_.Field(path, source);
  json_.EndObject();
  json_.Field("finalized", h.finalized);
  if (h.counts) Counts(*h.counts);
  json_.EndObject();
}

// The sections of stats_table.h: the problems in the stats object itself,
// the others in objects of their own, each only when shown (the unwinder's
// always). Consecutive sections with one key share an object, its counters
// in the table's order.
void JsonPrinter::StatsSectionsJson(const LoadStats& stats) {
  const std::span<const StatsSectionInfo> sections = StatsSections();
  for (size_t first = 0; first < sections.size();) {
    size_t end = first + 1;
    while (!sections[first].json_key.empty() && end < sections.size() &&
           sections[end].json_key == sections[first].json_key) {
      ++end;
    }
    const auto in_object = [&](StatsSection section) {
      for (size_t i = first; i < end; ++i) {
        if (sections[i].section == section) return StatsSectionInJson(sections[i], stats);
      }
      return false;
    };
    bool any = false;
    for (size_t i = first; i < end; ++i) any |= StatsSectionInJson(sections[i], stats);
    if (any) {
      const std::string_view key = sections[first].json_key;
      if (!key.empty()) json_.Key(key).BeginObject();
      for (const StatsCounter& c : StatsCounters()) {
        if (!in_object(c.section) || !StatsShown(c, stats)) continue;
        if (c.entries == nullptr) {
          json_.Field(c.key, c.value(stats));
          continue;
        }
        json_.Key(c.key).BeginObject();
        for (const auto& [name, n] : c.entries(stats)) json_.Field(name, n);
        json_.EndObject();
      }
      if (!key.empty()) json_.EndObject();
    }
    first = end;
  }
}

}  // namespace sample::report
