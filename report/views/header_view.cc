#include "report/views/header_view.h"

#include <linux/perf_event.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "libsample/percent.h"
#include "report/views/enabled_periods.h"

namespace sample::report {
namespace {

// The fields of `a` that EventInfo has no key of its own for, when set.
// Which attr fields have their own keys: type, config, freq and
// sample_period/sample_freq, sample_type, read_format, sample_regs_user,
// sample_stack_user (when the chain capture copies the stack), exclude_user,
// exclude_kernel, exclude_callchain_user and inherit.
std::vector<AttrField> OtherAttrFields(const perf_event_attr& a, bool stack_shown) {
  static const std::set<std::string_view> kKeyed = {"config",          "sample_period",
                                                    "sample_freq",     "sample_type",
                                                    "read_format",     "freq",
                                                    "inherit",         "exclude_user",
                                                    "exclude_kernel",  "exclude_callchain_user",
                                                    "sample_regs_user"};
  std::vector<AttrField> fields = SetAttrFields(a);
  std::erase_if(fields, [&](const AttrField& f) {
    return kKeyed.contains(f.name) || (stack_shown && f.name == "sample_stack_user");
  });
  return fields;
}

std::string Fact(const format::Metadata& metadata, std::string_view key) {
  return format::FindMetadata(metadata, key).value_or("");
}

std::string UtcTime(uint64_t realtime_ns) {
  const time_t seconds = static_cast<time_t>(realtime_ns / 1000000000u);
  tm utc{};
  if (gmtime_r(&seconds, &utc) == nullptr) return "";
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

// Times from the first record; a switch before it (the start's enable
// comes just before the events are on) counts from the switch.
ControlInfo BuildControlInfo(const Recording& recording, uint64_t first, uint64_t last) {
  uint64_t origin = first, end = last;
  for (const format::ControlEntry& e : recording.control) {
    if (origin == 0 || e.time_ns < origin) origin = e.time_ns;
    end = std::max(end, e.time_ns);
  }
  const EnabledPeriods enabled = BuildEnabledPeriods(recording.control, recording.events, end);
  ControlInfo info;
  for (const EnabledPeriod& p : enabled.periods) {
    ControlInfo::Period period;
    period.start_s = static_cast<double>(p.start_ns - origin) / 1e9;
    period.end_s = static_cast<double>(p.end_ns - origin) / 1e9;
    for (uint32_t i : p.events) period.events.push_back(recording.events[i].name);
    info.periods.push_back(std::move(period));
  }
  info.enabled_s = static_cast<double>(enabled.enabled_ns) / 1e9;
  info.total_s = static_cast<double>(end - origin) / 1e9;
  return info;
}

// The recorded event `i`: its attrs named, its group and its samples.
EventInfo BuildEventInfo(const Recording& recording, size_t i) {
  const Profile& profile = recording.profile;
  const EventDesc& desc = recording.events[i];
  const perf_event_attr& a = desc.attr;
  EventInfo e;
  e.name = desc.name;
  e.type = a.type;
  e.type_name = AttrTypeName(a.type);
  e.config = a.config;
  e.freq = a.freq;
  e.period_or_freq = a.sample_period;  // a union with sample_freq
  e.sample_type = a.sample_type;
  e.sample_type_names = SampleTypeNames(a.sample_type);
  e.read_format = a.read_format;
  e.read_format_names = ReadFormatNames(a.read_format);
  e.chain_capture = ChainCaptureFromAttr(a);
  e.sample_regs_user = a.sample_regs_user;
  e.exclude_callchain_user = a.exclude_callchain_user;
  e.exclude_user = a.exclude_user;
  e.exclude_kernel = a.exclude_kernel;
  e.inherit = a.inherit;
  e.attr_fields = OtherAttrFields(a, e.chain_capture.stack_size != 0);
  e.ids = desc.ids.size();
  for (uint32_t member : profile.group_members(static_cast<uint32_t>(i))) {
    e.group_members.push_back(recording.events[member].name);
  }
  e.samples = profile.sample_count(static_cast<uint32_t>(i));
  if (i < recording.tracepoints.size()) {
    const TracepointDesc& trace = recording.tracepoints[i];
    e.tracepoint = e.type == PERF_TYPE_TRACEPOINT;
    e.filter = trace.filter;
    if (trace.format) {
      for (const TraceField& field : trace.format->fields) {
        if (!field.common()) e.trace_fields.push_back(field.name);
      }
    }
  }
  if (i < recording.stats.alloc.calls.size() && recording.events[i].name.starts_with("alloc:")) {
    // Its samples became the alloc pseudo-events', or paired and left out.
    e.samples = recording.stats.alloc.calls[i];
  }
  if (i == recording.off_cpu_source && recording.off_cpu_event) {
    // Its samples were moved to the off-CPU pseudo-events, or left out.
    e.samples = profile.sample_count(*recording.off_cpu_event) +
                profile.sample_count(*recording.off_cpu_event + 1) +
                recording.stats.off_cpu.unmatched;
  }
  return e;
}

// The toggled events, in event order.
std::vector<ToggleInfo> BuildToggleInfos(const Recording& recording) {
  std::vector<ToggleInfo> toggles;
  for (size_t i = 0; i < recording.toggle_stats.size() && i < recording.events.size(); ++i) {
    const ToggleStats& st = recording.toggle_stats[i];
    if (!st.toggled) continue;
    ToggleInfo t;
    t.name = recording.events[i].name;
    for (const ToggleRelation& rel : recording.toggles) {
      if (rel.target != i || rel.trigger >= recording.events.size()) continue;
      (rel.on ? t.on_by : t.off_by).push_back(recording.events[rel.trigger].name);
      t.per_cpu = rel.per_cpu;
      t.starts_on = rel.target_starts_on;
    }
    t.windows = st.windows;
    t.inside = st.inside;
    t.outside = st.outside;
    t.unmatched_off = st.unmatched_off;
    t.applied = recording.toggles_applied;
    toggles.push_back(std::move(t));
  }
  return toggles;
}

}  // namespace

HeaderView BuildHeaderView(const Recording& recording) {
  const format::Metadata& m = recording.metadata;
  HeaderView h;
  h.hostname = Fact(m, "hostname");
  h.os_release = Fact(m, "os_release");
  h.os_version = Fact(m, "os_version");
  h.arch = Fact(m, "arch");
  h.cpus_online = Fact(m, "cpus_online");
  h.cmdline = Fact(m, "cmdline");
  h.recorder_version = Fact(m, "recorder_version");
  h.format = recording.format_name;
  h.kernel_symbols = Fact(m, "kernel_symbols");
  const std::string start = Fact(m, "start_realtime_ns");
  uint64_t start_ns = 0;
  if (auto [end, ec] = std::from_chars(start.data(), start.data() + start.size(), start_ns);
      !start.empty() && ec == std::errc() && end == start.data() + start.size()) {
    h.start_realtime_ns = start_ns;
    h.start_time = UtcTime(start_ns);
  }
  const LoadStats& stats = recording.stats;
  uint64_t first = stats.first_time, last = stats.last_time;
  if (recording.trailer &&
      recording.trailer->header.end_clock_ns >= recording.trailer->header.start_clock_ns) {
    first = recording.trailer->header.start_clock_ns;
    last = recording.trailer->header.end_clock_ns;
  }
  h.duration_s = static_cast<double>(last - first) / 1e9;
  if (!recording.control.empty()) h.control = BuildControlInfo(recording, first, last);
  for (size_t i = 0; i < recording.events.size(); ++i) {
    h.events.push_back(BuildEventInfo(recording, i));
  }
  h.samples = stats.samples;
  h.lost_samples = stats.lost_samples;
  h.per_cpu = stats.per_cpu;
  h.build_ids = recording.build_ids;
  for (const auto& [dso, code] : recording.jit_code) {
    h.jit_dumps.push_back({dso, code->functions().size(), code->dump_counts().moves});
  }
  h.finalized = recording.finalized;
  h.file_size = recording.file_size;
  h.valid_end = recording.valid_end;
  if (recording.counts) h.counts = BuildCountsInfo(*recording.counts);
  h.toggles = BuildToggleInfos(recording);
  return h;
}

CountsInfo BuildCountsInfo(const format::Counts& counts) {
  CountsInfo info;
  info.from_counting = counts.source != format::kCountsFromSampling;
  info.elapsed_s = static_cast<double>(counts.elapsed_ns) / 1e9;
  for (const format::EventCounts& e : counts.events) {
    CountInfo c;
    c.name = e.name;
    c.supported = e.supported;
    c.count = e.count;
    c.time_enabled = e.time_enabled;
    c.time_running = e.time_running;
    c.intervals = e.intervals.size();
    if (e.time_enabled != 0) {
      c.running_pct = Percentage(e.time_running, e.time_enabled);
    }
    if (e.supported && e.time_running != 0 && e.time_running < e.time_enabled) {
      // long double: count * enabled must not overflow on the way.
      c.scaled =
          static_cast<double>(static_cast<long double>(e.count) * e.time_enabled / e.time_running);
      ++info.multiplexed;
    }
    info.events.push_back(std::move(c));
  }
  return info;
}

}  // namespace sample::report
