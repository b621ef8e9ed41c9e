// Per-CPU counters the recorder keeps while draining, and what becomes of
// them at the end: the file's trailer and the closing line on stderr.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/string_parts.h"  // HumanBytes, for the summary's users

namespace sample::record {

struct RecordOptions;
struct RecordSummary;

struct CpuCounters {
  uint64_t samples = 0;
  uint64_t lost_samples = 0;     // PERF_RECORD_LOST: ring buffer was full
  uint64_t lost_records = 0;     // how many PERF_RECORD_LOST records
  uint64_t dropped_samples = 0;  // PERF_RECORD_LOST_SAMPLES
  uint64_t throttles = 0;
};

// Counts a loss or throttle record of one CPU's ring into `c`
// (PERF_RECORD_LOST, LOST_SAMPLES, THROTTLE); other records are left alone.
void CountLossRecord(const perf_event_header& header, std::span<const std::byte> record,
                     const perf_event_attr& attr, CpuCounters* c);

format::Trailer MakeTrailer(const std::vector<CpuCounters>& counters);

struct ClosingNotes;
// The notes of closing a file: missing kernel symbols or [vdso] image,
// what was embedded, binaries and maps that could not be.
void PrintClosingNotes(const ClosingNotes& notes);

// "[ sample-record: N samples, M lost, ... ]" and, when samples were lost,
// which CPUs lost them and what to change.
void PrintSummary(const RecordSummary& summary, const std::vector<CpuCounters>& counters,
                  const std::vector<int>& cpus, const RecordOptions& options);

}  // namespace sample::record
