#include "report/header_view.h"

#include <linux/perf_event.h>
#include <time.h>

#include <charconv>

#include <fmt/format.h>

namespace sample::report {
namespace {

std::string FlagNames(uint64_t bits, const std::vector<std::pair<uint64_t, const char*>>& names) {
  std::string out;
  for (const auto& [bit, name] : names) {
    if (!(bits & bit)) continue;
    if (!out.empty()) out += '|';
    out += name;
    bits &= ~bit;
  }
  if (bits != 0) out += fmt::format("{}{:#x}", out.empty() ? "" : "|", bits);
  return out;
}

std::string SampleTypeNames(uint64_t t) {
  return FlagNames(t, {
                          {PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"},
                          {PERF_SAMPLE_IP, "IP"},
                          {PERF_SAMPLE_TID, "TID"},
                          {PERF_SAMPLE_TIME, "TIME"},
                          {PERF_SAMPLE_ADDR, "ADDR"},
                          {PERF_SAMPLE_ID, "ID"},
                          {PERF_SAMPLE_STREAM_ID, "STREAM_ID"},
                          {PERF_SAMPLE_CPU, "CPU"},
                          {PERF_SAMPLE_PERIOD, "PERIOD"},
                          {PERF_SAMPLE_READ, "READ"},
                          {PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"},
                          {PERF_SAMPLE_RAW, "RAW"},
                          {PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"},
                          {PERF_SAMPLE_REGS_USER, "REGS_USER"},
                          {PERF_SAMPLE_STACK_USER, "STACK_USER"},
                          {PERF_SAMPLE_WEIGHT, "WEIGHT"},
                          {PERF_SAMPLE_DATA_SRC, "DATA_SRC"},
                          {PERF_SAMPLE_TRANSACTION, "TRANSACTION"},
                          {PERF_SAMPLE_REGS_INTR, "REGS_INTR"},
                          {PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR"},
                      });
}

std::string ReadFormatNames(uint64_t f) {
  return FlagNames(f, {
                          {PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"},
                          {PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"},
                          {PERF_FORMAT_ID, "ID"},
                          {PERF_FORMAT_GROUP, "GROUP"},
                          {PERF_FORMAT_LOST, "LOST"},
                      });
}

std::string TypeName(uint32_t type) {
  switch (type) {
    case PERF_TYPE_HARDWARE:
      return "hardware";
    case PERF_TYPE_SOFTWARE:
      return "software";
    case PERF_TYPE_TRACEPOINT:
      return "tracepoint";
    case PERF_TYPE_HW_CACHE:
      return "hw-cache";
    case PERF_TYPE_RAW:
      return "raw";
    case PERF_TYPE_BREAKPOINT:
      return "breakpoint";
    default:
      return fmt::format("pmu {}", type);
  }
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

  const Profile& profile = recording.profile;
  for (size_t i = 0; i < recording.events.size(); ++i) {
    const EventDesc& desc = recording.events[i];
    const perf_event_attr& a = desc.attr;
    EventInfo e;
    e.name = desc.name;
    e.type = a.type;
    e.type_name = TypeName(a.type);
    e.config = a.config;
    e.freq = a.freq;
    e.period_or_freq = a.sample_period;  // a union with sample_freq
    e.sample_type = a.sample_type;
    e.sample_type_names = SampleTypeNames(a.sample_type);
    e.read_format = a.read_format;
    e.read_format_names = ReadFormatNames(a.read_format);
    e.call_graph = CallGraphFromAttr(a);
    e.sample_regs_user = a.sample_regs_user;
    e.exclude_callchain_user = a.exclude_callchain_user;
    e.exclude_user = a.exclude_user;
    e.exclude_kernel = a.exclude_kernel;
    e.inherit = a.inherit;
    e.ids = desc.ids.size();
    for (uint32_t member : profile.group_members(static_cast<uint32_t>(i))) {
      e.group_members.push_back(recording.events[member].name);
    }
    e.samples = profile.sample_count(static_cast<uint32_t>(i));
    h.events.push_back(std::move(e));
  }
  h.samples = stats.samples;
  h.lost_samples = stats.lost_samples;
  h.per_cpu = stats.per_cpu;
  h.build_ids = recording.build_ids;
  h.finalized = recording.finalized;
  h.file_size = recording.file_size;
  h.valid_end = recording.valid_end;
  return h;
}

std::string RecordTypeName(uint32_t type) {
  static constexpr const char* kNames[] = {nullptr,        "MMAP",
                                           "LOST",         "COMM",
                                           "EXIT",         "THROTTLE",
                                           "UNTHROTTLE",   "FORK",
                                           "READ",         "SAMPLE",
                                           "MMAP2",        "AUX",
                                           "ITRACE_START", "LOST_SAMPLES",
                                           "SWITCH",       "SWITCH_CPU_WIDE",
                                           "NAMESPACES",   "KSYMBOL",
                                           "BPF_EVENT",    "CGROUP",
                                           "TEXT_POKE",    "AUX_OUTPUT_HW_ID"};
  if (type < std::size(kNames) && kNames[type] != nullptr) return kNames[type];
  return fmt::format("TYPE_{}", type);
}

}  // namespace sample::report
