#include "record/embed/frame_cache.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "libsample/cache_dir.h"
#include "libsample/symbols/own_build.h"
#include "libsample/crc32.h"
#include "libsample/regular_file.h"
#include "libsample/string_parts.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample::record {
namespace {

// The file: a head, then the pieces KnownFrames::Pieces cut, each read
// only when an offset asked for lies in its span.
// - The head: the magic, the CRC-32 of the rest of the head, the sizes
//   of the identity and of the directory (4-byte fields), the identity
//   text, zeros to a multiple of 8 bytes, and the directory: a Piece
//   entry each, in offset order.
// - A piece: the sizes of its ranges, runs, frames and strings (4-byte
//   fields), then KnownFrames' tables as they are in memory, in this
//   machine's byte order (the cache never leaves it), used where they
//   are read to (Load), then zeros to a multiple of 8 bytes.
constexpr char kMagic[4] = {'S', 'F', 'C', '5'};
constexpr size_t kHeaderSize = 4 * 4;
constexpr size_t kPieceHeaderSize = 4 * 4;
// A file larger than this is not ours (libc's whole text is ~1.5 MB).
constexpr off_t kMaxFileSize = off_t{64} << 20;
static_assert(sizeof(KnownFrames::Range) == 16 && sizeof(KnownFrames::Run) == 16 &&
              sizeof(KnownFrames::Frame) == 16);

// A directory entry: the piece's bytes [at, at + size) hold the frames of
// offsets [begin, end) (its first range's begin, its last one's end).
struct PieceEntry {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t at = 0;
  uint32_t size = 0;
  uint32_t crc = 0;
};
static_assert(sizeof(PieceEntry) == 32);

// A build-id as a file name's part: Go's (166 hex digits) as a hash.
std::string FileSafeId(const std::string& id) {
  if (id.size() <= 64) return id;
  uint64_t hash = 0xcbf29ce484222325;  // FNV-1a
  for (const char c : id) hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3;
  return fmt::format("h{:016x}", hash);
}

// The file name's part for a display name: [vdso] -> _vdso_.
std::string FileSafe(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '-' || c == '+';
    out += plain ? c : '_';
  }
  return out.substr(0, 100);
}

template <typename T>
void Append(std::vector<std::byte>& out, const T* data, size_t count) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  out.insert(out.end(), bytes, bytes + count * sizeof(T));
}

void AppendU32(std::vector<std::byte>& out, size_t value) {
  const auto v = static_cast<uint32_t>(value);
  Append(out, &v, 1);
}

size_t AlignedTo8(size_t size) { return (size + 7) & ~size_t{7}; }

// Where the directory starts.
size_t DirectoryAt(size_t identity_size) { return AlignedTo8(kHeaderSize + identity_size); }

void EncodePiece(const KnownFrames& piece, std::vector<std::byte>& out) {
  AppendU32(out, piece.ranges().size());
  AppendU32(out, piece.runs().size());
  AppendU32(out, piece.frames().size());
  AppendU32(out, piece.strings().size());
  Append(out, piece.ranges().data(), piece.ranges().size());
  Append(out, piece.runs().data(), piece.runs().size());
  Append(out, piece.frames().data(), piece.frames().size());
  Append(out, piece.strings().data(), piece.strings().size());
  out.resize(AlignedTo8(out.size()));
}

std::vector<std::byte> Encode(const std::string& identity, const KnownFrames& known,
                              size_t piece_bytes) {
  std::vector<KnownFrames> pieces = known.Pieces(piece_bytes);
  // A piece of runs outside every range holds nothing At() would give.
  std::erase_if(pieces, [](const KnownFrames& piece) { return piece.ranges().empty(); });
  std::vector<std::byte> body;
  std::vector<PieceEntry> directory;
  const size_t body_at = DirectoryAt(identity.size()) + pieces.size() * sizeof(PieceEntry);
  for (const KnownFrames& piece : pieces) {
    const size_t at = body.size();
    EncodePiece(piece, body);
    const auto bytes = std::span(body).subspan(at);
    directory.push_back(PieceEntry{piece.ranges().front().begin, piece.ranges().back().end,
                                   body_at + at, static_cast<uint32_t>(bytes.size()),
                                   Crc32(bytes)});
  }
  std::vector<std::byte> out;
  Append(out, kMagic, sizeof(kMagic));
  AppendU32(out, 0);  // CRC, below
  AppendU32(out, identity.size());
  AppendU32(out, directory.size());
  Append(out, identity.data(), identity.size());
  out.resize(DirectoryAt(identity.size()));
  Append(out, directory.data(), directory.size());
  const uint32_t crc = Crc32(std::span(out).subspan(8));
  std::memcpy(out.data() + 4, &crc, sizeof(crc));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

// The `count` entries of T at `at` (a multiple of T's alignment in
// 8-byte aligned bytes), moving it on; false past the end.
template <typename T>
bool Take(std::span<const std::byte> bytes, size_t& at, uint64_t count, std::span<const T>& out) {
  static_assert(8 % alignof(T) == 0 && sizeof(T) % 8 == 0);
  if (count > (bytes.size() - at) / sizeof(T)) return false;
  out = {reinterpret_cast<const T*>(bytes.data() + at), count};
  at += count * sizeof(T);
  return true;
}

// A piece's tables, in place in `bytes` (8-byte aligned).
std::optional<KnownFrames::Tables> DecodePiece(std::span<const std::byte> bytes) {
  if (bytes.size() < kPieceHeaderSize) return std::nullopt;
  uint32_t sizes[4];
  std::memcpy(sizes, bytes.data(), sizeof(sizes));
  size_t at = kPieceHeaderSize;
  KnownFrames::Tables tables;
  if (!Take(bytes, at, sizes[0], tables.ranges) || !Take(bytes, at, sizes[1], tables.runs) ||
      !Take(bytes, at, sizes[2], tables.frames) || sizes[3] > bytes.size() - at) {
    return std::nullopt;
  }
  tables.strings = std::string_view(reinterpret_cast<const char*>(bytes.data() + at), sizes[3]);
  return tables;
}

// The directory of a file, from its head; nullopt unless the head is
// whole, its checksum right and the identity `identity`.
std::optional<std::vector<PieceEntry>> ReadDirectory(int fd, size_t file_size,
                                                     const std::string& identity) {
  const size_t directory_at = DirectoryAt(identity.size());
  // The head of a file of this identity with up to 128 pieces: one read.
  std::vector<std::byte> head(std::min(file_size, directory_at + 128 * sizeof(PieceEntry)));
  if (head.size() < directory_at || PreadAll(fd, head, 0) != head.size() ||
      std::memcmp(head.data(), kMagic, sizeof(kMagic)) != 0) {
    return std::nullopt;
  }
  uint32_t fields[3];
  std::memcpy(fields, head.data() + 4, sizeof(fields));
  const auto [crc, identity_size, count] = fields;
  // The identity first: a file of another key costs no checksum.
  if (identity_size != identity.size() ||
      std::memcmp(head.data() + kHeaderSize, identity.data(), identity.size()) != 0 ||
      count > (file_size - directory_at) / sizeof(PieceEntry)) {
    return std::nullopt;
  }
  const size_t head_size = directory_at + count * sizeof(PieceEntry);
  if (head_size > head.size()) {
    const size_t had = head.size();
    head.resize(head_size);
    if (PreadAll(fd, std::span(head).subspan(had), had) != head_size - had) return std::nullopt;
  }
  if (Crc32(std::span(head).subspan(8, head_size - 8)) != crc) return std::nullopt;
  std::vector<PieceEntry> directory(count);
  std::memcpy(directory.data(), head.data() + directory_at, count * sizeof(PieceEntry));
  // In offset order and disjoint; in the file after the head, in the same
  // order and disjoint too (what Load reads adds up to at most the file),
  // each a multiple of 8 bytes (read one after another, each stays
  // aligned).
  uint64_t bytes_end = head_size;
  for (size_t i = 0; i < count; ++i) {
    const PieceEntry& e = directory[i];
    if (e.begin >= e.end || (i > 0 && e.begin < directory[i - 1].end) || e.at < bytes_end ||
        e.at > file_size || e.size > file_size - e.at || e.size % 8 != 0) {
      return std::nullopt;
    }
    bytes_end = e.at + e.size;
  }
  return directory;
}

// The pieces of the file `name` in `dir_fd` holding `wanted` offsets (all of them
// without), joined; nullopt unless the file is ours, of `identity` and
// what was read of it whole and right. Each piece is read into memory of
// its own and used there: not through a mapping of the file, which a
// truncation or an in-place rewrite (by another program, or another NFS
// client renaming its own copy over it) would change after Valid(): a
// SIGBUS, or tables no longer checked.
std::optional<KnownFrames> Load(int dir_fd, const std::string& name, const std::string& identity,
                                std::optional<std::span<const uint64_t>> wanted,
                                FrameCache::Stats* stats) {
  auto fd = OpenCacheFile(dir_fd, name);
  struct stat st;
  if (!fd || fstat(fd->get(), &st) != 0 || st.st_size > kMaxFileSize) return std::nullopt;
  MarkCacheFileUsed(fd->get());
  const auto file_size = static_cast<size_t>(st.st_size);
  const auto directory = ReadDirectory(fd->get(), file_size, identity);
  if (!directory) return std::nullopt;
  std::vector<bool> needed(directory->size(), !wanted);
  for (const uint64_t offset : wanted.value_or(std::span<const uint64_t>())) {
    auto next = std::upper_bound(directory->begin(), directory->end(), offset,
                                 [](uint64_t o, const PieceEntry& e) { return o < e.begin; });
    if (next != directory->begin() && offset < std::prev(next)->end) {
      needed[static_cast<size_t>(std::prev(next) - directory->begin())] = true;
    }
  }
  // The pieces needed, read by runs of neighbours in the file.
  size_t total = 0;
  for (size_t i = 0; i < needed.size(); ++i) total += needed[i] ? (*directory)[i].size : 0;
  std::vector<uint64_t> memory(total / 8 + 1);  // 8-byte aligned
  const auto bytes = std::as_writable_bytes(std::span(memory));
  std::vector<KnownFrames::Tables> pieces;
  size_t filled = 0;
  for (size_t i = 0; i < needed.size();) {
    if (!needed[i]) {
      ++i;
      continue;
    }
    size_t end = i;
    uint64_t size = 0;
    while (end < needed.size() && needed[end] &&
           (*directory)[end].at == (*directory)[i].at + size) {
      size += (*directory)[end++].size;
    }
    if (PreadAll(fd->get(), bytes.subspan(filled, size), (*directory)[i].at) != size) {
      return std::nullopt;
    }
    for (; i < end; ++i) {
      const auto piece = bytes.subspan(filled, (*directory)[i].size);
      filled += piece.size();
      if (Crc32(piece) != (*directory)[i].crc) return std::nullopt;
      // Its ranges inside its span, or a partial read would answer
      // otherwise than a whole one.
      auto tables = DecodePiece(piece);
      if (!tables || tables->ranges.empty() ||
          tables->ranges.front().begin < (*directory)[i].begin ||
          tables->ranges.back().end > (*directory)[i].end) {
        return std::nullopt;
      }
      pieces.push_back(*tables);
    }
  }
  if (stats != nullptr) *stats = FrameCache::Stats{pieces.size(), directory->size()};
  KnownFrames known = KnownFrames::Join(pieces);
  if (!known.Valid()) return std::nullopt;
  return known;
}

}  // namespace

std::string FrameCache::NameOf(const FrameCacheKey& key) {
  return fmt::format("{}.{}.frames", FileSafeId(key.build_id), FileSafe(key.display_name));
}

std::string FrameCache::PathOf(const std::string& dir, const FrameCacheKey& key) {
  return fmt::format("{}/{}", dir, NameOf(key));
}

std::string FrameCache::Identity(const FrameCacheKey& key) {
  std::string debug = "none";
  if (struct stat st; !key.debug.empty() && stat(key.debug.c_str(), &st) == 0) {
    debug = fmt::format("{} {} {} {}.{:09}", key.debug, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                        st.st_mtim.tv_nsec);
  } else if (!key.debug.empty()) {
    debug = key.debug + " (unreadable)";
  }
  return fmt::format("sample frames; recorder {}; binary {} {}; name {}; debug {}",
                     OwnBuildIdentity(), key.build_id, key.fingerprint, key.display_name, debug);
}

std::string FrameCache::Fingerprint(const ElfFile& file) {
  size_t size = 0;
  elf_rawfile(file.get(), &size);
  uint32_t crc = 0;
  size_t count = 0;
  if (elf_getshdrnum(file.get(), &count) == 0) {
    for (size_t i = 0; i < count; ++i) {
      GElf_Shdr shdr;
      if (gelf_getshdr(elf_getscn(file.get(), i), &shdr) == nullptr) continue;
      crc = Crc32(std::as_bytes(std::span(&shdr, 1)), crc);
    }
  }
  return fmt::format("{} bytes, {} sections {:08x}", size, count, crc);
}

FrameCache FrameCache::Open(const std::string& dir, const FrameCacheKey& key,
                            std::optional<std::span<const uint64_t>> wanted) {
  FrameCache cache;
  if (dir.empty() || key.build_id.empty() ||
      key.build_id.find_first_not_of("0123456789abcdef") != std::string::npos ||
      OwnBuildIdentity().empty()) {
    return cache;
  }
  // The checked walk (libsample/cache_dir.h): no cache in another user's
  // tree; every file below is reached through this fd.
  auto dir_fd = std::make_shared<UniqueFd>(OpenOwnDirectory(dir));
  if (!dir_fd->valid()) return cache;
  cache.enabled_ = true;
  cache.dir_ = dir_fd;
  cache.name_ = NameOf(key);
  cache.identity_ = Identity(key);
  if (auto known = Load(dir_fd->get(), cache.name_, cache.identity_, wanted, &cache.stats_)) {
    cache.known_ = std::move(*known);
    // Some pieces: the rest before learning more.
    if (cache.stats_.pieces_read < cache.stats_.pieces) {
      cache.known_.LearnAfter([dir_fd, name = cache.name_, identity = cache.identity_] {
        return Load(dir_fd->get(), name, identity, std::nullopt, nullptr);
      });
    }
  }
  return cache;
}

void FrameCache::Save(size_t piece_bytes) {
  if (!enabled_ || known_.learnt() == saved_) return;
  const std::vector<std::byte> bytes = Encode(identity_, known_, piece_bytes);
  // A larger file would never be read (Load).
  if (bytes.size() > static_cast<size_t>(kMaxFileSize)) return;
  if (!WriteCacheFile(dir_->get(), name_, bytes)) return;
  saved_ = known_.learnt();
}

void FrameCache::Trim(const std::string& dir) {
  if (dir.empty()) return;
  // Never made here: a recording that saved nothing has nothing to trim.
  UniqueFd dir_fd = OpenOwnDirectory(dir, CacheDirectoryOptions{.create = false});
  if (!dir_fd.valid()) return;
  TrimCacheDirectory(dir_fd.get(), CacheTrimPolicy{.suffix = ".frames",
                                                   .max_bytes = kMaxFrameCacheBytes,
                                                   .max_unused_seconds = kFrameCacheUnusedSeconds});
}

}  // namespace sample::record
