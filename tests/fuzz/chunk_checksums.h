// Rewrites the CRC of every chunk of a sample.data file in place, so a
// fuzzer's mutations of chunk headers and payloads get past the checksum
// to the code behind it (the reader would otherwise drop nearly every
// mutated chunk at the CRC). Walks the chunks as the reader does and stops
// where the reader would: a short file header, a torn chunk, a bad magic.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>

#include "formats/sample_file_format.h"
#include "libsample/crc32.h"

namespace sample::fuzz {

inline void FixChunkChecksums(std::span<std::byte> file) {
  using format::ChunkHeader;
  using format::FileHeader;
  FileHeader header;
  if (file.size() < sizeof(header)) return;
  std::memcpy(&header, file.data(), sizeof(header));
  if (header.chunk_header_size < sizeof(ChunkHeader)) return;
  size_t at = header.header_size;
  while (at <= file.size() && file.size() - at >= header.chunk_header_size) {
    ChunkHeader chunk;
    std::memcpy(&chunk, file.data() + at, sizeof(chunk));
    const size_t payload_at = at + header.chunk_header_size;
    if (chunk.magic != format::kChunkMagic || chunk.stored_size > file.size() - payload_at) return;
    chunk.crc32 = 0;
    chunk.crc32 = Crc32(file.subspan(payload_at, chunk.stored_size),
                        Crc32(std::as_bytes(std::span(&chunk, 1))));
    std::memcpy(file.data() + at, &chunk, sizeof(chunk));
    at = payload_at + chunk.stored_size;
  }
}

}  // namespace sample::fuzz
