// Names of the kernel interface's numbers, as linux/perf_event.h spells
// them: PERF_RECORD_* types, PERF_SAMPLE_* and PERF_FORMAT_* bits, attr
// types, clock ids, and the fields of a perf_event_attr. Kept beside the
// kernel interface so every view, printer and reader names a record or an
// attr field the same way (--stats' records by type, --script's
// PERF_RECORD_ lines, --header's event lines and their JSON).
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sample {

// "SAMPLE", "MMAP2", ... for a PERF_RECORD_* type; "TYPE_N" for others.
std::string RecordTypeName(uint32_t type);

// "IDENTIFIER|IP|TID|...": the PERF_SAMPLE_* bits of a sample_type, in the
// order perf prints them; bits without a name as a trailing hex number.
std::string SampleTypeNames(uint64_t sample_type);
// "TOTAL_TIME_ENABLED|ID|...": the PERF_FORMAT_* bits of a read_format.
std::string ReadFormatNames(uint64_t read_format);

// "hardware", "software", "tracepoint", ...; "pmu N" for a dynamic PMU.
std::string AttrTypeName(uint32_t type);
// "CLOCK_MONOTONIC", ... for the clocks perf_event_open takes; empty else.
std::string ClockName(int32_t clockid);

// One field of a perf_event_attr, named as in linux/perf_event.h.
struct AttrField {
  std::string name;  // "precise_ip", "clockid", "bp_addr", ...
  uint64_t value = 0;
  bool hex = false;     // a mask or an address: shown in hex
  std::string meaning;  // "CLOCK_MONOTONIC" for a clockid; usually empty
};

// The fields of `attr` that are set (non-zero; clockid whenever use_clockid
// is, since CLOCK_REALTIME is 0), in the struct's order: size, config,
// sample_period or sample_freq, sample_type, read_format, the flags, then
// the values after them. Unions are named by what selects them
// (wakeup_watermark with watermark, bp_addr/bp_len for breakpoints). The
// type is left out: it is always meaningful, and AttrTypeName names it.
std::vector<AttrField> SetAttrFields(const perf_event_attr& attr);

}  // namespace sample
