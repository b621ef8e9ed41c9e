#include "record/output/cpu_counters.h"

#include "libsample/perf/perf_record.h"

namespace sample::record {

void CountLossRecord(const perf_event_header& header, std::span<const std::byte> record,
                     const perf_event_attr& attr, CpuCounters* c) {
  switch (header.type) {
    case PERF_RECORD_LOST:
      if (auto lost = ParseLost(record, attr)) {
        c->lost_samples += lost->lost;
        ++c->lost_records;
      }
      break;
    case PERF_RECORD_LOST_SAMPLES:
      if (auto lost = ParseLostSamples(record, attr)) c->dropped_samples += lost->lost;
      break;
    case PERF_RECORD_THROTTLE:
      ++c->throttles;
      break;
    default:
      break;
  }
}

format::Trailer MakeTrailer(const std::vector<CpuCounters>& counters) {
  format::Trailer trailer;
  for (const CpuCounters& c : counters) {
    format::TrailerCpu cpu{};
    cpu.samples = c.samples;
    cpu.lost_samples = c.lost_samples;
    cpu.lost_records = c.lost_records;
    cpu.dropped_samples = c.dropped_samples;
    cpu.throttles = c.throttles;
    trailer.cpus.push_back(cpu);
    trailer.header.sample_count += c.samples;
    trailer.header.lost_samples += c.lost_samples + c.dropped_samples;
  }
  return trailer;
}

}  // namespace sample::record
