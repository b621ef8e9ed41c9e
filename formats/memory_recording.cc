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

void MemoryRecording::SetChunks(std::vector<RecordsChunk> chunks) {
  for (std::vector<std::byte>& payload : payloads_) spare_.push_back(std::move(payload));
  payloads_.clear();
  refs_.clear();
  for (RecordsChunk& chunk : chunks) {
    if (chunk.records.empty()) {
      given_.push_back(std::move(chunk.records));
      continue;
    }
    ChunkRef ref;
    ref.header.type = static_cast<uint16_t>(ChunkType::kRecords);
    ref.header.record_count = chunk.record_count;
    ref.header.time_min = chunk.time_min;
    ref.header.time_max = chunk.time_max;
    ref.offset = payloads_.size();
    if (chunk.cpu_field) {
      std::vector<std::byte> out;
      if (!spare_.empty()) {
        out = std::move(spare_.back());
        spare_.pop_back();
      }
      out.clear();
      AppendWithCpus(chunk.records, chunk.cpu_runs, *chunk.cpu_field, out);
      payloads_.push_back(std::move(out));
      given_.push_back(std::move(chunk.records));
    } else {
      payloads_.push_back(std::move(chunk.records));
    }
    ref.header.raw_size = payloads_.back().size();
    ref.header.stored_size = ref.header.raw_size;
    refs_.push_back(ref);
  }
}

std::vector<std::vector<std::byte>> MemoryRecording::TakeSpareBuffers() {
  // Beyond what the next chunks' CPU insertion will reuse.
  while (spare_.size() > payloads_.size() + 1) {
    given_.push_back(std::move(spare_.back()));
    spare_.pop_back();
  }
  std::vector<std::vector<std::byte>> out = std::move(given_);
  given_.clear();
  for (std::vector<std::byte>& buffer : out) buffer.clear();
  return out;
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
