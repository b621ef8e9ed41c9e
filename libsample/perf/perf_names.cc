#include "libsample/perf/perf_names.h"

#include <time.h>

#include <iterator>
#include <utility>

#include <fmt/format.h>

namespace sample {
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

// The single-bit flags of perf_event_attr, in the order of the bitfield.
void AddFlags(const perf_event_attr& a, std::vector<AttrField>& fields) {
  auto add = [&](const char* name, uint64_t value) {
    if (value != 0) fields.push_back(AttrField{name, value, false, ""});
  };
  add("disabled", a.disabled);
  add("inherit", a.inherit);
  add("pinned", a.pinned);
  add("exclusive", a.exclusive);
  add("exclude_user", a.exclude_user);
  add("exclude_kernel", a.exclude_kernel);
  add("exclude_hv", a.exclude_hv);
  add("exclude_idle", a.exclude_idle);
  add("mmap", a.mmap);
  add("comm", a.comm);
  add("freq", a.freq);
  add("inherit_stat", a.inherit_stat);
  add("enable_on_exec", a.enable_on_exec);
  add("task", a.task);
  add("watermark", a.watermark);
  add("precise_ip", a.precise_ip);
  add("mmap_data", a.mmap_data);
  add("sample_id_all", a.sample_id_all);
  add("exclude_host", a.exclude_host);
  add("exclude_guest", a.exclude_guest);
  add("exclude_callchain_kernel", a.exclude_callchain_kernel);
  add("exclude_callchain_user", a.exclude_callchain_user);
  add("mmap2", a.mmap2);
  add("comm_exec", a.comm_exec);
  add("use_clockid", a.use_clockid);
  add("context_switch", a.context_switch);
  add("write_backward", a.write_backward);
  add("namespaces", a.namespaces);
  add("ksymbol", a.ksymbol);
  add("bpf_event", a.bpf_event);
  add("aux_output", a.aux_output);
  add("cgroup", a.cgroup);
  add("text_poke", a.text_poke);
  add("build_id", a.build_id);
  add("inherit_thread", a.inherit_thread);
  add("remove_on_exec", a.remove_on_exec);
  add("sigtrap", a.sigtrap);
}

}  // namespace

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
                          {PERF_SAMPLE_AUX, "AUX"},
                          {PERF_SAMPLE_CGROUP, "CGROUP"},
                          {PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE"},
                          {PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE"},
                          {PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT"},
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

std::string AttrTypeName(uint32_t type) {
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

std::string ClockName(int32_t clockid) {
  switch (clockid) {
    case CLOCK_REALTIME:
      return "CLOCK_REALTIME";
    case CLOCK_MONOTONIC:
      return "CLOCK_MONOTONIC";
    case CLOCK_MONOTONIC_RAW:
      return "CLOCK_MONOTONIC_RAW";
    case CLOCK_BOOTTIME:
      return "CLOCK_BOOTTIME";
    case CLOCK_TAI:
      return "CLOCK_TAI";
    default:
      return "";
  }
}

std::vector<AttrField> SetAttrFields(const perf_event_attr& a) {
  std::vector<AttrField> fields;
  auto add = [&](const char* name, uint64_t value, bool hex = false) {
    if (value != 0) fields.push_back(AttrField{name, value, hex, ""});
  };
  add("size", a.size);
  add("config", a.config, true);
  add(a.freq ? "sample_freq" : "sample_period", a.sample_period);  // a union
  add("sample_type", a.sample_type, true);
  add("read_format", a.read_format, true);
  AddFlags(a, fields);
  // The values after the flags; unions named by what selects them.
  add(a.watermark ? "wakeup_watermark" : "wakeup_events", a.wakeup_events);
  add("bp_type", a.bp_type);
  const bool breakpoint = a.type == PERF_TYPE_BREAKPOINT;
  add(breakpoint ? "bp_addr" : "config1", a.config1, true);
  add(breakpoint ? "bp_len" : "config2", a.config2, !breakpoint);
  add("branch_sample_type", a.branch_sample_type, true);
  add("sample_regs_user", a.sample_regs_user, true);
  add("sample_stack_user", a.sample_stack_user);
  if (a.use_clockid) {
    // CLOCK_REALTIME is 0: with use_clockid even 0 says which clock.
    fields.push_back(AttrField{"clockid", static_cast<uint64_t>(static_cast<uint32_t>(a.clockid)),
                               false, ClockName(a.clockid)});
  } else {
    add("clockid", static_cast<uint32_t>(a.clockid));
  }
  add("sample_regs_intr", a.sample_regs_intr, true);
  add("aux_watermark", a.aux_watermark);
  add("sample_max_stack", a.sample_max_stack);
  add("aux_sample_size", a.aux_sample_size);
  add("sig_data", a.sig_data, true);
  return fields;
}

}  // namespace sample
