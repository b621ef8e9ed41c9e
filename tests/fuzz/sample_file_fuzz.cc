// Fuzz target: a whole sample.data file through SampleFileReader (header,
// chunk walk, checksums, zstd, our chunk payloads), then every record of
// every record chunk through the event table and the record parser its
// type calls for, as the report does. Input: the file. Checksums make most
// mutations of a chunk fail early; chunk_codec and perf_record fuzz what
// lies behind them directly.
#include <cstdlib>

#include "formats/sample_file_reader.h"
#include "libsample/memory_file.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/record_walker.h"
#include "tests/fuzz/chunk_checksums.h"
#include "tests/fuzz/fuzz_target.h"

SAMPLE_FUZZ_TARGET(sample_file)(std::span<const std::byte> input) {
  using namespace sample;
  // One in-memory file for all inputs: the reader opens files by path.
  static MemoryFile* file = [] {
    auto created = MemoryFile::Create("fuzz-sample-file", {});
    if (!created) std::abort();
    return new MemoryFile(std::move(*created));
  }();
  fuzz::InputTaker take(input);
  const uint8_t flags = take.Take<uint8_t>();
  std::vector<std::byte> bytes(take.rest().begin(), take.rest().end());
  if (flags & 1) fuzz::FixChunkChecksums(bytes);
  if (!file->Assign(bytes)) std::abort();
  auto reader = format::SampleFileReader::Open(file->path());
  if (!reader) return 0;
  if (reader->valid_end() > reader->file_size()) std::abort();

  volatile uint64_t sum = reader->metadata().size() + reader->build_ids().size() +
                          reader->kernel_symbols().size() + reader->warnings().size() +
                          reader->embedded_binaries().size() + reader->perf_maps().size();
  format::Payload payload;
  for (const format::ChunkRef& chunk : reader->record_chunks()) {
    if (!reader->ReadPayloadInto(chunk, payload)) continue;
    ForEachRecord(payload.bytes(),
                  [&](const perf_event_header& header, std::span<const std::byte> record) {
                    const auto event = reader->events().EventIndexFor(record);
                    if (!event) return;
                    const perf_event_attr& attr = reader->events().events()[*event].attr;
                    sum = sum + RecordTime(record, attr);
                    if (header.type == PERF_RECORD_SAMPLE) {
                      if (auto s = ParseSample(record, attr)) {
                        for (size_t i = 0; i < s->callchain.size(); ++i)
                          sum = sum + s->callchain[i];
                      }
                    } else if (header.type == PERF_RECORD_MMAP2) {
                      if (auto m = ParseMmap2(record, attr)) sum = sum + m->filename.size();
                    } else if (header.type == PERF_RECORD_COMM) {
                      if (auto c = ParseComm(record, attr)) sum = sum + c->comm.size();
                    }
                  });
  }
  return 0;
}
