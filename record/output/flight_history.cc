#include "record/output/flight_history.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "libsample/perf/record_walker.h"

namespace sample::record {
namespace {

bool IsSideband(uint32_t type) {
  switch (type) {
    case PERF_RECORD_COMM:
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2:
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
    case PERF_RECORD_KSYMBOL:
    case PERF_RECORD_CGROUP:
    case PERF_RECORD_NAMESPACES:
      return true;
    default:
      return false;
  }
}

// The (pid, start) of an MMAP2 record of data (no PROT_EXEC: -d's).
std::optional<std::pair<uint32_t, uint64_t>> DataMapping(const perf_event_header& header,
                                                         std::span<const std::byte> record,
                                                         const perf_event_attr& attr) {
  if (header.type != PERF_RECORD_MMAP2) return std::nullopt;
  const auto m = ParseMmap2(record, attr);
  if (!m || (m->prot & 0x4 /* PROT_EXEC */)) return std::nullopt;
  return std::pair{m->pid, m->addr};
}

// Calls fn(cpu, bytes) for each run of `chunk` (one run, CPU 0, when the
// chunk has none).
template <typename Fn>
void ForEachRun(const format::RecordsChunk& chunk, Fn&& fn) {
  const std::span<const std::byte> all(chunk.records);
  if (chunk.cpu_runs.empty()) {
    fn(0u, all);
    return;
  }
  size_t start = 0;
  for (const format::CpuRun& run : chunk.cpu_runs) {
    const size_t end = std::min(run.end, all.size());
    if (end > start) fn(run.cpu, all.subspan(start, end - start));
    start = std::max(start, end);
  }
}

}  // namespace

uint64_t FlightByteCap(double seconds) {
  const double cap = seconds * 32.0 * 1024 * 1024;
  return std::max<uint64_t>(64ull << 20, static_cast<uint64_t>(cap));
}

FlightHistory::FlightHistory(uint64_t span_ns, uint64_t byte_cap, const perf_event_attr& attr,
                             std::optional<CpuFieldPlace> cpu_field)
    : span_ns_(span_ns), byte_cap_(byte_cap), attr_(attr) {
  sideband_.cpu_field = cpu_field;
  sideband_.time_min = UINT64_MAX;
}

void FlightHistory::KeepSideband(const format::RecordsChunk& chunk) {
  std::vector<std::byte>& out = sideband_.records;
  ForEachRun(chunk, [&](uint32_t cpu, std::span<const std::byte> bytes) {
    const size_t before = out.size();
    ForEachRecord(bytes, [&](const perf_event_header& header, std::span<const std::byte> record) {
      if (!IsSideband(header.type)) return;
      out.insert(out.end(), record.begin(), record.end());
      ++sideband_.record_count;
      if (DataMapping(header, record, attr_)) ++data_mappings_;
      if (const uint64_t time = RecordTime(record, attr_); time != 0) {
        sideband_.time_min = std::min(sideband_.time_min, time);
        sideband_.time_max = std::max(sideband_.time_max, time);
      }
    });
    if (out.size() == before) return;
    if (!sideband_.cpu_runs.empty() && sideband_.cpu_runs.back().cpu == cpu) {
      sideband_.cpu_runs.back().end = out.size();
    } else {
      sideband_.cpu_runs.push_back({out.size(), cpu});
    }
  });
  if (data_mappings_ >= compact_data_at_) {
    CompactDataMappings();
    compact_data_at_ = std::max<size_t>(4096, 2 * data_mappings_);
  }
}

void FlightHistory::CompactDataMappings() {
  std::map<std::pair<uint32_t, uint64_t>, size_t> last;  // -> the index of the newest
  size_t index = 0;
  ForEachRun(sideband_, [&](uint32_t, std::span<const std::byte> bytes) {
    ForEachRecord(bytes, [&](const perf_event_header& header, std::span<const std::byte> record) {
      if (const auto key = DataMapping(header, record, attr_)) last[*key] = index;
      ++index;
    });
  });
  format::RecordsChunk kept;
  kept.cpu_field = sideband_.cpu_field;
  kept.time_min = sideband_.time_min;
  kept.time_max = sideband_.time_max;
  kept.records.reserve(sideband_.records.size());
  index = 0;
  data_mappings_ = 0;
  ForEachRun(sideband_, [&](uint32_t cpu, std::span<const std::byte> bytes) {
    const size_t before = kept.records.size();
    ForEachRecord(bytes, [&](const perf_event_header& header, std::span<const std::byte> record) {
      const auto key = DataMapping(header, record, attr_);
      const bool superseded = key && last.at(*key) != index;
      ++index;
      if (superseded) return;
      kept.records.insert(kept.records.end(), record.begin(), record.end());
      ++kept.record_count;
      data_mappings_ += key.has_value();
    });
    if (kept.records.size() == before) return;
    if (!kept.cpu_runs.empty() && kept.cpu_runs.back().cpu == cpu) {
      kept.cpu_runs.back().end = kept.records.size();
    } else {
      kept.cpu_runs.push_back({kept.records.size(), cpu});
    }
  });
  sideband_ = std::move(kept);
}

void FlightHistory::AddSideband(const format::RecordsChunk& chunk) { KeepSideband(chunk); }

std::vector<std::byte> FlightHistory::Add(format::RecordsChunk chunk) {
  const uint64_t newest = chunk.time_max;
  std::vector<std::byte> spare;
  if (chunk.records.capacity() / 2 > chunk.records.size()) {
    // The drainer's buffer is sized for a full chunk and all its rings
    // (megabytes); a chunk handed over for its age fills a fraction of it.
    // Kept whole, every chunk would hold that reservation, and with
    // transparent huge pages its first touch made 2 MiB of it resident (a
    // live view paid a fifth of its CPU clearing them). The records are
    // kept in a buffer of their size, and the large one goes back to the
    // drainer for the next chunk.
    std::vector<std::byte> kept(chunk.records.begin(), chunk.records.end());
    spare = std::move(chunk.records);
    spare.clear();
    chunk.records = std::move(kept);
  }
  chunk_bytes_ += chunk.records.size();
  chunks_.push_back(std::move(chunk));
  // A chunk goes when its newest record is older than the span; the
  // last one always stays.
  while (chunks_.size() > 1 &&
         (chunks_.front().time_max + span_ns_ < newest || chunk_bytes_ > byte_cap_)) {
    if (chunks_.front().time_max + span_ns_ >= newest) ++capped_chunks_;
    KeepSideband(chunks_.front());
    chunk_bytes_ -= chunks_.front().records.size();
    std::vector<std::byte> buffer = std::move(chunks_.front().records);
    chunks_.pop_front();
    buffer.clear();
    if (spare.capacity() < buffer.capacity()) spare = std::move(buffer);
  }
  return spare;
}

namespace {

// Adds the samples and losses of `chunk` to `counters`, by the index of
// each run's CPU in `cpus` (the rings' order; the first for per-thread
// rings); `attr`: the first event's.
void CountChunk(const format::RecordsChunk& chunk, const std::vector<int>& cpus,
                const perf_event_attr& attr, std::vector<CpuCounters>& counters) {
  auto index_of = [&](uint32_t cpu) -> size_t {
    for (size_t i = 0; i < cpus.size(); ++i) {
      if (cpus[i] == static_cast<int>(cpu)) return i;
    }
    return 0;  // per-thread rings (-1) and anything unknown: the first
  };
  ForEachRun(chunk, [&](uint32_t cpu, std::span<const std::byte> bytes) {
    CpuCounters& c = counters[index_of(cpu)];
    ForEachRecord(bytes, [&](const perf_event_header& header, std::span<const std::byte> r) {
      if (header.type == PERF_RECORD_SAMPLE) {
        ++c.samples;
      } else {
        CountLossRecord(header, r, attr, &c);
      }
    });
  });
}

}  // namespace

std::vector<CpuCounters> FlightHistory::Count(const std::vector<int>& cpus) const {
  std::vector<CpuCounters> counters(std::max<size_t>(cpus.size(), 1));
  for (const format::RecordsChunk& chunk : chunks_) CountChunk(chunk, cpus, attr_, counters);
  return counters;
}

}  // namespace sample::record
