// The reader's embedded chunks: binaries' tables, perf maps and jitdump
// parts, each judged by its header against the DecodeBudget shared by the
// files a report reads together before it is decompressed, and charged
// whether it decodes or not. Split from sample_file_reader.cc, whose
// class (SampleFileReader) these members belong to.
#include "formats/sample_file_reader.h"

#include <algorithm>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "formats/decode_budget.h"
#include "formats/embedded_codec.h"

namespace sample::format {

void SampleFileReader::ReadEmbeddedChunk(const ChunkRef& ref, uint64_t payload_offset) {
  const auto type = static_cast<ChunkType>(ref.header.type);
  const bool binary = type == ChunkType::kEmbeddedBinary;
  const char* what = binary                        ? "embedded binary"
                     : type == ChunkType::kPerfMap ? "perf map"
                                                   : "jitdump";
  auto skipped = [&](std::string_view problem) {
    warnings_.push_back(fmt::format("{}: {} skipped: {}", path_, what, problem));
  };
  DecodeBudget& budget = *budget_;
  auto over = [&](std::string_view what_size) {
    return skipped(fmt::format(
        "offset {}: {} are over what is left of the {} bytes the embedded chunks of the "
        "recordings read may take ({} MiB and {} times their stored bytes, at most {} MiB)",
        ref.offset, what_size, budget.total(), kEmbeddedDecodedFloor >> 20,
        kMaxEmbeddedDecodedRatio, kMaxEmbeddedTotalSize >> 20));
  };
  // The payload is judged by its header before it is decompressed, and
  // charged whether it decodes or not: the first MiB of any chunk is
  // ratio-free, so a chunk that fails at its first field would otherwise
  // cost a megabyte of inflating for ~60 stored bytes, again and again. A
  // perf map or jitdump keeps what its payload holds (a copy that
  // replaces it): that and 1 KiB for its own bookkeeping is its whole
  // charge; a binary's tables are charged as they are decoded.
  const uint64_t raw_size = ref.header.raw_size;
  const uint64_t charge = binary ? raw_size : raw_size + 1024;
  if (charge > budget.left()) {
    return over(fmt::format("the {} bytes its payload claims uncompressed", raw_size));
  }
  budget.Charge(charge);
  // What the payload decodes to is bounded by the memory left, before
  // anything is decoded.
  auto payload = ReadPayload(ref);
  if (!payload) return skipped(payload.error().message);
  if (binary) {
    // Charged whether kept or refused (DecodeBudget says why).
    uint64_t charged = 0;
    auto decoded = DecodeEmbeddedBinary(payload->bytes(), payload_offset,
                                        std::min(kMaxEmbeddedDecodedSize, budget.left()), &charged);
    budget.Charge(charged);
    if (!decoded) return skipped(decoded.error().message);
    embedded_.Add(std::make_shared<const EmbeddedBinary>(std::move(*decoded)));
    return;
  }
  if (type == ChunkType::kJitDump) {
    auto part = DecodeJitDumpPart(payload->bytes(), payload_offset);
    if (!part) return skipped(part.error().message);
    return AddJitDumpPart(*part, ref.offset);
  }
  auto map = DecodePerfMap(payload->bytes(), payload_offset);
  if (!map) return skipped(map.error().message);
  perf_maps_.push_back(std::move(*map));
}

void SampleFileReader::AddJitDumpPart(const JitDumpPart& part, uint64_t chunk_offset) {
  if (part.part == 0) {
    latest_jit_dump_[part.pid] = jit_dumps_.size();
    jit_dumps_.push_back(RecordedJitDump{part.pid, {part.bytes.begin(), part.bytes.end()}, 1});
    return;
  }
  // The dump this part goes on: the last one of its pid.
  auto latest = latest_jit_dump_.find(part.pid);
  if (latest == latest_jit_dump_.end()) {
    warnings_.push_back(fmt::format("{}: offset {}: jitdump part {} of pid {} skipped: no part 0",
                                    path_, chunk_offset, part.part, part.pid));
    return;
  }
  RecordedJitDump& dump = jit_dumps_[latest->second];
  // Parts hold whole records: after a missing one the next still joins on.
  if (part.part != dump.parts) {
    warnings_.push_back(fmt::format("{}: offset {}: jitdump of pid {}: part {} after part {}",
                                    path_, chunk_offset, part.pid, part.part, dump.parts - 1));
  }
  dump.bytes.insert(dump.bytes.end(), part.bytes.begin(), part.bytes.end());
  dump.parts = part.part + 1;
}

}  // namespace sample::format
