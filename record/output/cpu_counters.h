// CpuCounters: what each CPU's ring gave a recording (samples, losses,
// throttles), counted by the drainer as records go by and written into
// every file's trailer (MakeTrailer).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "formats/chunk_codec.h"

namespace sample::record {

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

}  // namespace sample::record
