#include "libsample/regular_file.h"
#include "record/counting/count_file.h"

#include <fmt/format.h>

#include "formats/sample_file_writer.h"
#include "record/counting/counters.h"
#include "record/facts/host_facts.h"

namespace sample::record {

format::Counts MakeCounts(const std::vector<EventSpec>& specs,
                          const std::vector<CountedEvent>& totals,
                          const std::vector<CountedInterval>& intervals, uint64_t elapsed_ns,
                          bool on_exec, bool inherit) {
  format::Counts counts;
  counts.source = format::kCountsFromCounting;
  counts.elapsed_ns = elapsed_ns;
  for (size_t i = 0; i < specs.size() && i < totals.size(); ++i) {
    format::EventCounts e;
    e.name = totals[i].name;
    e.attr = CountingAttr(specs[i], on_exec, inherit);
    e.attr.config1 = specs[i].config1_string() == nullptr ? e.attr.config1 : 0;  // no stale pointer
    e.supported = totals[i].supported;
    e.count = totals[i].count;
    e.time_enabled = totals[i].enabled;
    e.time_running = totals[i].running;
    for (const CountedInterval& interval :
         e.supported ? intervals : std::vector<CountedInterval>{}) {
      if (i >= interval.totals.size()) continue;
      const CountedEvent& c = interval.totals[i];
      e.intervals.push_back({interval.time_ns, c.count, c.enabled, c.running});
    }
    counts.events.push_back(std::move(e));
  }
  return counts;
}

Result<void> WriteCountsFile(const std::string& path, const std::vector<EventSpec>& specs,
                             const format::Counts& counts,
                             const std::vector<std::string>& invocation, uint64_t start_ns) {
  TRY(MoveAside(path, "-o"));
  TRY_ASSIGN(auto writer, format::SampleFileWriter::Create(path, format::WriterOptions{}));
  // The event table readers require; counters have no ids (no records
  // refer to them).
  std::vector<EventDesc> events;
  for (size_t i = 0; i < specs.size() && i < counts.events.size(); ++i) {
    EventDesc desc;
    desc.name = counts.events[i].name;
    desc.attr = counts.events[i].attr;
    events.push_back(std::move(desc));
  }
  writer->Submit(format::ChunkType::kEvents, format::EncodeEvents(events));
  format::Metadata facts = CollectHostFacts(invocation);
  // The counting started before now: say when, on both clocks.
  const uint64_t since_start = MonotonicNowNs() - start_ns;
  for (auto& [key, value] : facts) {
    if (key == "start_clock_ns") value = fmt::format("{}", start_ns);
    if (key == "start_realtime_ns") value = fmt::format("{}", std::stoull(value) - since_start);
  }
  writer->Submit(format::ChunkType::kMetadata, format::EncodeMetadata(facts));
  writer->Submit(format::ChunkType::kCounts, format::EncodeCounts(counts));
  format::Trailer trailer;
  trailer.header.start_clock_ns = start_ns;
  trailer.header.end_clock_ns = start_ns + counts.elapsed_ns;
  if (auto finished = writer->Finish(trailer); !finished) {
    return Fail(fmt::format("{}: {}", path, finished.error().message));
  }
  return {};
}

}  // namespace sample::record
