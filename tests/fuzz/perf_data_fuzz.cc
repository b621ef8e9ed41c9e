// Fuzz target: a whole perf.data file (file or pipe mode, compressed or
// not) through PerfDataReader, with no host lookups, then every chunk's
// records through the event table and the parsers the loader uses. Input:
// the file.
#include <cstdlib>

#include "formats/perf_data_reader.h"
#include "libsample/memory_file.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(perf_data)(std::span<const std::byte> input) {
  using namespace sample;
  static MemoryFile* file = [] {
    auto created = MemoryFile::Create("fuzz-perf-data", {});
    if (!created) std::abort();
    return new MemoryFile(std::move(*created));
  }();
  if (!file->Assign(input)) std::abort();
  auto mapped = MappedFile::Open(file->path());
  if (!mapped) return 0;
  format::PerfDataHost host;
  host.use_host = false;
  auto reader = format::PerfDataReader::Open(file->path(), std::move(*mapped), host);
  if (!reader) return 0;
  const format::PerfDataReader& r = **reader;
  if (r.valid_end() > r.file_size()) std::abort();
  volatile uint64_t sum = r.metadata().size() + r.build_ids().size() + r.warnings().size() +
                          r.other_records().size();
  format::Payload payload;
  for (const format::ChunkRef& chunk : r.record_chunks()) {
    if (!r.ReadPayloadInto(chunk, payload)) continue;
    // The scan promised this many bytes of whole kernel records.
    if (payload.bytes().size() != chunk.header.raw_size) std::abort();
    ForEachRecord(payload.bytes(), [&](const perf_event_header& header,
                                       std::span<const std::byte> record) {
      const auto event = r.events().EventIndexFor(record);
      if (!event) return;
      const perf_event_attr& attr = r.events().events()[*event].attr;
      sum = sum + RecordTime(record, attr);
      if (header.type == PERF_RECORD_SAMPLE) {
        if (auto s = ParseSample(record, attr)) sum = sum + s->callchain.size() + s->ip;
      } else if (header.type == PERF_RECORD_MMAP) {
        if (auto m = ParseMmap(record, attr)) sum = sum + m->filename.size();
      } else if (header.type == PERF_RECORD_MMAP2) {
        if (auto m = ParseMmap2(record, attr)) sum = sum + m->filename.size();
      } else if (header.type == PERF_RECORD_COMM) {
        if (auto c = ParseComm(record, attr)) sum = sum + c->comm.size();
      }
    });
  }
  return 0;
}
