#include "formats/memory_recording.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace sample::format {

MemoryRecording::MemoryRecording(std::string name, std::vector<EventDesc> events, Metadata metadata,
                                 std::string kernel_symbols)
    : name_(std::move(name)),
      events_(std::move(events)),
      metadata_(std::move(metadata)),
      kernel_symbols_(std::move(kernel_symbols)) {}

namespace {

// The chunk's records as the file would hold them: CPU fields inserted.
std::vector<std::byte> FileRecords(RecordsChunk& chunk) {
  if (!chunk.cpu_field) return std::move(chunk.records);
  std::vector<std::byte> out;
  out.reserve(chunk.records.size() + chunk.records.size() / 4 + 64);
  size_t start = 0;
  const std::span<const std::byte> records(chunk.records);
  for (const CpuRun& run : chunk.cpu_runs) {
    const size_t end = std::min(run.end, records.size());
    if (end <= start) continue;
    InsertCpuField(records.subspan(start, end - start), run.cpu, *chunk.cpu_field, out);
    start = end;
  }
  out.insert(out.end(), records.begin() + static_cast<ptrdiff_t>(start), records.end());
  return out;
}

}  // namespace

void MemoryRecording::SetChunks(std::vector<RecordsChunk> chunks) {
  payloads_.clear();
  refs_.clear();
  for (RecordsChunk& chunk : chunks) {
    if (chunk.records.empty()) continue;
    ChunkRef ref;
    ref.header.type = static_cast<uint16_t>(ChunkType::kRecords);
    ref.header.record_count = chunk.record_count;
    ref.header.time_min = chunk.time_min;
    ref.header.time_max = chunk.time_max;
    ref.offset = payloads_.size();
    payloads_.push_back(FileRecords(chunk));
    ref.header.raw_size = payloads_.back().size();
    ref.header.stored_size = ref.header.raw_size;
    refs_.push_back(ref);
  }
}

Result<void> MemoryRecording::ReadPayloadInto(const ChunkRef& chunk, Payload& out) const {
  if (chunk.offset >= payloads_.size()) {
    return Fail(fmt::format("{}: no chunk {} in memory", name_, chunk.offset));
  }
  const std::vector<std::byte>& bytes = payloads_[chunk.offset];
  out.Resize(bytes.size());
  if (!bytes.empty()) std::memcpy(out.mutable_bytes().data(), bytes.data(), bytes.size());
  return {};
}

}  // namespace sample::format
