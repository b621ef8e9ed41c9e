#include "formats/sample_file_reader.h"

#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "formats/embedded_codec.h"
#include "formats/sample_columns.h"
#include "formats/user_reg_deltas.h"
#include "libsample/byte_reader.h"
#include "libsample/crc32.h"
#include "libsample/symbols/perf_map.h"

namespace sample::format {
namespace {

struct DCtxDeleter {
  void operator()(ZSTD_DCtx* ctx) const { ZSTD_freeDCtx(ctx); }
};

ZSTD_DCtx* ThreadDecompressionContext() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> ctx(ZSTD_createDCtx());
  return ctx.get();
}

constexpr const char* kHostKallsyms = "/proc/kallsyms";

}  // namespace

Result<SampleFileReader> SampleFileReader::Open(const std::string& path) {
  TRY_ASSIGN(auto file, MappedFile::Open(path));
  return Open(path, std::move(file));
}

Result<SampleFileReader> SampleFileReader::Open(const std::string& path, MappedFile file,
                                                DecodeBudget* budget) {
  SampleFileReader reader(path, std::move(file));
  DecodeBudget own;
  reader.budget_ = budget != nullptr ? budget : &own;
  reader.budget_->AddFile(reader.file_.bytes().size());
  auto scanned = reader.Scan();
  reader.budget_ = nullptr;
  TRY(scanned);
  return reader;
}

Result<void> SampleFileReader::Scan() {
  ByteReader in(file_.bytes());
  TRY(ReadFileHeader(in));
  uint64_t records_seen = 0;
  bool have_events = false;
  valid_end_ = in.position();
  while (!in.empty()) {
    auto ref = NextChunk(in);
    if (!ref) break;  // a torn or foreign end: what came before stands
    valid_end_ = in.position();
    if (static_cast<ChunkType>(ref->header.type) == ChunkType::kRecords) {
      record_chunks_.push_back(*ref);
      records_seen += ref->header.record_count;
      continue;
    }
    TRY(ReadMetadataChunk(*ref));
    have_events |= static_cast<ChunkType>(ref->header.type) == ChunkType::kEvents;
  }
  if (!have_events) {
    return Fail(fmt::format("{}: no event descriptions found (valid data ends at offset {})", path_,
                            valid_end_));
  }
  if (!trailer_) {
    warnings_.push_back(fmt::format(
        "{}: the file was not finalized (the recorder was killed or crashed): recovered {} "
        "record chunks with {} records, up to offset {} of {}",
        path_, record_chunks_.size(), records_seen, valid_end_, file_.bytes().size()));
  }
  // The kernel's symbols are written at the close. A file never closed
  // (killed, or still being written) has none: this host's table names its
  // kernel addresses when it was recorded on this very boot (a new boot
  // places the kernel and its modules anew).
  if (kernel_symbols_.empty() && !trailer_) {
    const auto boot = FindMetadata(metadata_, "kernel_boot_id");
    if (boot && !boot->empty() && *boot == BootId() && access(kHostKallsyms, R_OK) == 0) {
      host_kallsyms_ = kHostKallsyms;
    }
  }
  return {};
}

Result<void> SampleFileReader::ReadFileHeader(ByteReader& in) {
  const size_t size = file_.bytes().size();
  if (!in.Read(&file_header_)) {
    return Fail(fmt::format("{}: offset 0: the file has {} bytes, fewer than the {}-byte header",
                            path_, size, sizeof(FileHeader)));
  }
  if (std::memcmp(file_header_.magic, kFileMagic, sizeof(kFileMagic)) != 0) {
    return Fail(fmt::format("{}: offset 0: not a sample data file (bad magic)", path_));
  }
  if (file_header_.version != kFileVersion) {
    return Fail(fmt::format("{}: offset 8: unsupported format version {} (this reader knows {})",
                            path_, file_header_.version, kFileVersion));
  }
  if (file_header_.header_size < sizeof(FileHeader) ||
      file_header_.chunk_header_size < sizeof(ChunkHeader) || !in.Seek(file_header_.header_size)) {
    return Fail(fmt::format("{}: offset 12: bad header or chunk header size ({}, {})", path_,
                            file_header_.header_size, file_header_.chunk_header_size));
  }
  if (file_header_.max_chunk_raw_size > kReaderMaxChunkRawSize) {
    return Fail(
        fmt::format("{}: offset {}: the header allows chunks of {} bytes; this reader "
                    "takes at most {}",
                    path_, offsetof(FileHeader, max_chunk_raw_size),
                    file_header_.max_chunk_raw_size, kReaderMaxChunkRawSize));
  }
  chunk_limit_ = file_header_.max_chunk_raw_size != 0 ? file_header_.max_chunk_raw_size
                                                      : kReaderMaxChunkRawSize;
  return {};
}

std::optional<ChunkRef> SampleFileReader::NextChunk(ByteReader& in) {
  const size_t size = file_.bytes().size();
  const uint64_t offset = in.position();
  ChunkRef ref;
  ref.offset = offset;
  if (!in.Read(&ref.header) || !in.Skip(file_header_.chunk_header_size - sizeof(ChunkHeader))) {
    warnings_.push_back(
        fmt::format("{}: offset {}: the file ends inside a chunk header ({} stray bytes ignored)",
                    path_, offset, size - offset));
    return std::nullopt;
  }
  if (ref.header.magic != kChunkMagic) {
    warnings_.push_back(
        fmt::format("{}: offset {}: bad chunk magic; the remaining {} bytes are ignored", path_,
                    offset, size - offset));
    return std::nullopt;
  }
  if (ref.header.stored_size > in.remaining()) {
    warnings_.push_back(fmt::format(
        "{}: offset {}: chunk of {} bytes is cut off by the end of the file after {} bytes", path_,
        offset, ref.header.stored_size, in.remaining()));
    return std::nullopt;
  }
  in.Skip(ref.header.stored_size);
  return ref;
}

// Every chunk but records: events (fatal when unreadable, nothing can be
// parsed without them), then what a report can do without (skipped with a
// warning). Unknown types are skipped by design: the format grows by
// adding chunk types.
Result<void> SampleFileReader::ReadMetadataChunk(const ChunkRef& ref) {
  const uint64_t payload_offset = ref.offset + file_header_.chunk_header_size;
  auto skipped = [&](const char* what, const Error& error) {
    warnings_.push_back(fmt::format("{}: {} skipped: {}", path_, what, error.message));
  };
  switch (static_cast<ChunkType>(ref.header.type)) {
    case ChunkType::kEvents: {
      auto payload = ReadPayload(ref);
      if (!payload) return Fail(payload.error().message);
      auto events = DecodeEvents(payload->bytes(), payload_offset);
      if (!events) return Fail(fmt::format("{}: {}", path_, events.error().message));
      std::vector<EventDesc> all = events_.events();
      all.insert(all.end(), events->begin(), events->end());
      events_ = EventTable(std::move(all));
      break;
    }
    case ChunkType::kMetadata:
      AppendKeyValues(ref, payload_offset, "metadata", metadata_);
      break;
    case ChunkType::kBuildIds:
      AppendKeyValues(ref, payload_offset, "build-ids", build_ids_);
      break;
    case ChunkType::kKernelSymbols: {
      auto payload = ReadPayload(ref);
      if (!payload) {
        skipped("kernel symbols", payload.error());
        break;
      }
      const auto bytes = payload->bytes();
      kernel_symbols_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      break;
    }
    case ChunkType::kVdso: {
      auto payload = ReadPayload(ref);
      if (!payload) {
        skipped("[vdso] image", payload.error());
        break;
      }
      vdso_image_ = std::move(*payload);
      break;
    }
    case ChunkType::kCounts: {
      auto payload = ReadPayload(ref);
      auto counts = payload ? DecodeCounts(payload->bytes(), payload_offset)
                            : tl::unexpected(payload.error());
      if (!counts) {
        skipped("counts", counts.error());
        break;
      }
      counts_ = std::move(*counts);
      break;
    }
    case ChunkType::kToggles: {
      auto payload = ReadPayload(ref);
      auto toggles = payload
                         ? DecodeToggles(payload->bytes(), payload_offset, events_.events().size())
                         : tl::unexpected(payload.error());
      if (!toggles) {
        // Without the relations every sample is kept, as --no-toggle would.
        skipped("toggles (every sample is kept)", toggles.error());
        break;
      }
      toggles_.insert(toggles_.end(), toggles->begin(), toggles->end());
      break;
    }
    case ChunkType::kControl: {
      auto payload = ReadPayload(ref);
      auto entries = payload ? DecodeControl(payload->bytes(), payload_offset)
                             : tl::unexpected(payload.error());
      if (!entries) {
        skipped("control entries", entries.error());
        break;
      }
      control_.insert(control_.end(), entries->begin(), entries->end());
      break;
    }
    case ChunkType::kTraceFormats: {
      auto payload = ReadPayload(ref);
      auto formats = payload ? DecodeTraceFormats(payload->bytes(), payload_offset)
                             : tl::unexpected(payload.error());
      if (!formats) {
        skipped("trace formats", formats.error());
        break;
      }
      trace_formats_.insert(trace_formats_.end(), formats->begin(), formats->end());
      break;
    }
    case ChunkType::kEmbeddedBinary:
    case ChunkType::kPerfMap:
    case ChunkType::kJitDump:
      ReadEmbeddedChunk(ref, payload_offset);
      break;
    case ChunkType::kTrailer: {
      auto payload = ReadPayload(ref);
      auto trailer = payload ? DecodeTrailer(payload->bytes(), payload_offset)
                             : tl::unexpected(payload.error());
      if (!trailer) {
        skipped("trailer", trailer.error());
        break;
      }
      trailer_ = std::move(*trailer);
      break;
    }
    default:
      break;
  }
  return {};
}

void SampleFileReader::AppendKeyValues(const ChunkRef& ref, uint64_t payload_offset,
                                       const char* what, Metadata& out) {
  auto payload = ReadPayload(ref);
  auto decoded =
      payload ? DecodeMetadata(payload->bytes(), payload_offset) : tl::unexpected(payload.error());
  if (!decoded) {
    warnings_.push_back(fmt::format("{}: {} skipped: {}", path_, what, decoded.error().message));
    return;
  }
  out.insert(out.end(), decoded->begin(), decoded->end());
}

Result<void> SampleFileReader::UndoDeltas(uint64_t chunk_offset, Payload& payload,
                                          uint32_t time_offset, bool reg_deltas, bool columns,
                                          ColumnCoding coding) const {
  if (columns) {
    auto records_size = DecodeSampleColumns(payload.mutable_bytes(), events_, coding);
    if (!records_size) {
      return Fail(
          fmt::format("{}: offset {}: {}", path_, chunk_offset, records_size.error().message));
    }
    payload.Resize(*records_size);
  }
  if (time_offset != 0) DecodeSampleTimeDeltas(payload.mutable_bytes(), time_offset);
  if (reg_deltas) DecodeUserRegDeltas(payload.mutable_bytes(), events_);
  return {};
}

Result<Payload> SampleFileReader::ReadPayload(const ChunkRef& chunk) const {
  Payload payload;
  TRY(ReadPayloadInto(chunk, payload));
  return payload;
}

Result<void> SampleFileReader::ReadPayloadInto(const ChunkRef& chunk, Payload& payload) const {
  const ChunkHeader& h = chunk.header;
  const uint64_t payload_offset = chunk.offset + file_header_.chunk_header_size;
  const std::span<const std::byte> stored = file_.bytes().subspan(payload_offset, h.stored_size);
  ChunkHeader zeroed = h;
  zeroed.crc32 = 0;
  const uint32_t crc = Crc32(stored, Crc32(std::as_bytes(std::span(&zeroed, 1))));
  if (crc != h.crc32) {
    return Fail(
        fmt::format("{}: offset {}: chunk checksum mismatch (stored {:08x}, computed {:08x})",
                    path_, chunk.offset, h.crc32, crc));
  }
  if ((h.flags & ~kChunkKnownFlags) != 0) {
    return Fail(
        fmt::format("{}: offset {}: chunk flags {:#x} include ones this reader does not know "
                    "(a newer recorder wrote it)",
                    path_, chunk.offset, h.flags));
  }
  const uint32_t time_offset = ChunkTimeOffset(h.flags);
  const bool time_deltas = (h.flags & kChunkFlagSampleTimeDeltas) != 0;
  const bool reg_deltas = (h.flags & kChunkFlagUserRegDeltas) != 0;
  const bool columns = (h.flags & kChunkFlagSampleColumns) != 0;
  const ColumnCoding coding{.split_time = (h.flags & kChunkFlagSplitTimeColumn) != 0,
                            .recent_sp = (h.flags & kChunkFlagRecentStackPointers) != 0};
  const bool records = h.type == static_cast<uint16_t>(ChunkType::kRecords);
  if ((time_deltas && (!records || time_offset < 8 || time_offset % 8 != 0)) ||
      (reg_deltas && !records) || (columns && (!records || time_deltas || reg_deltas)) ||
      ((coding.split_time || coding.recent_sp) && !columns)) {
    return Fail(fmt::format("{}: offset {}: chunk flags {:#x} are inconsistent", path_,
                            chunk.offset, h.flags));
  }
  // Before anything is allocated: a few stored bytes must not make us
  // allocate (or decompress) gigabytes.
  if (h.raw_size > chunk_limit_) {
    return Fail(
        fmt::format("{}: offset {}: chunk claims {} bytes uncompressed, over the {} the "
                    "file's header allows",
                    path_, chunk.offset, h.raw_size, chunk_limit_));
  }
  if (h.raw_size > kRatioFreeRawSize && h.raw_size / kMaxCompressionRatio > h.stored_size) {
    return Fail(
        fmt::format("{}: offset {}: chunk claims {} bytes uncompressed from {} stored, "
                    "more than {} times as many",
                    path_, chunk.offset, h.raw_size, h.stored_size, kMaxCompressionRatio));
  }
  // Sizes are checked against the stored bytes before the payload is
  // allocated: a header alone must not make us allocate gigabytes.
  switch (static_cast<Compression>(h.compression)) {
    case Compression::kNone:
      if (h.stored_size != h.raw_size) {
        return Fail(fmt::format("{}: offset {}: stored chunk sizes differ ({} vs {})", path_,
                                chunk.offset, h.stored_size, h.raw_size));
      }
      payload.Resize(h.raw_size);
      // memcpy from an empty span's null pointer is undefined, even for 0.
      if (!stored.empty())
        std::memcpy(payload.mutable_bytes().data(), stored.data(), stored.size());
      return UndoDeltas(chunk.offset, payload, time_deltas ? time_offset : 0, reg_deltas, columns,
                        coding);
    case Compression::kZstd: {
      // The writer's frames record their content size (zstd's default);
      // a payload may be several frames (kChunkFlagSplitTimeColumn).
      uint64_t content = 0;
      std::string why;
      for (size_t at = 0; at < stored.size() && why.empty();) {
        const std::span<const std::byte> rest = stored.subspan(at);
        const size_t frame = ZSTD_findFrameCompressedSize(rest.data(), rest.size());
        const unsigned long long size = ZSTD_getFrameContentSize(rest.data(), rest.size());
        if (ZSTD_isError(frame) || size == ZSTD_CONTENTSIZE_ERROR) {
          why = fmt::format("no valid zstd frame at payload byte {}", at);
        } else if (size == ZSTD_CONTENTSIZE_UNKNOWN) {
          why = fmt::format("the zstd frame at payload byte {} does not say its size", at);
        } else if (size > h.raw_size - content) {
          why = fmt::format("the zstd frames hold more than the {} bytes the chunk header says",
                            h.raw_size);
        } else {
          content += size;
          at += frame;
        }
      }
      if (why.empty() && content != h.raw_size) {
        why = fmt::format("the zstd frames hold {} bytes, not the {} the chunk header says",
                          content, h.raw_size);
      }
      if (!why.empty()) return Fail(fmt::format("{}: offset {}: {}", path_, chunk.offset, why));
      payload.Resize(h.raw_size);
      const size_t size =
          ZSTD_decompressDCtx(ThreadDecompressionContext(), payload.mutable_bytes().data(),
                              h.raw_size, stored.data(), stored.size());
      if (ZSTD_isError(size) || size != h.raw_size) {
        return Fail(fmt::format("{}: offset {}: zstd payload does not decompress to {} bytes: {}",
                                path_, chunk.offset, h.raw_size,
                                ZSTD_isError(size) ? ZSTD_getErrorName(size) : "size mismatch"));
      }
      return UndoDeltas(chunk.offset, payload, time_deltas ? time_offset : 0, reg_deltas, columns,
                        coding);
    }
  }
  return Fail(
      fmt::format("{}: offset {}: unknown compression {}", path_, chunk.offset, h.compression));
}

}  // namespace sample::format
