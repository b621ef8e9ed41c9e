#include "record/facts/frame_cache.h"

#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "libsample/cache_dir.h"
#include "libsample/crc32.h"
#include "libsample/regular_file.h"
#include "libsample/string_parts.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample::record {
namespace {

// The file: a header of 4-byte fields (the magic, the CRC-32 of the rest,
// then the sizes of the identity, ranges, runs, frames and strings), then
// the identity text, zeros to a multiple of 8 bytes, and KnownFrames'
// tables as they are in memory, in this machine's byte order (the cache
// never leaves it), used where they are read to (Load).
constexpr char kMagic[4] = {'S', 'F', 'C', '4'};
constexpr size_t kHeaderSize = 7 * 4;
// A file larger than this is not ours (libc's whole text is ~1.5 MB).
constexpr off_t kMaxFileSize = off_t{64} << 20;
static_assert(sizeof(KnownFrames::Range) == 16 && sizeof(KnownFrames::Run) == 16 &&
              sizeof(KnownFrames::Frame) == 16);
static_assert(kHeaderSize % 4 == 0);

// This build of sample and of the DWARF libraries it loaded, so that a
// cache another build wrote (whose symbolizer may name things otherwise)
// is not taken: "" when its own build-id cannot be read (no cache).
const std::string& OwnBuildId() {
  static const std::string id = [] {
    std::string own = ReadElfBuildId("/proc/self/exe").value_or("");
    if (own.empty()) return own;
    std::vector<std::string> libraries;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
          const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
          const std::string base = Basename(name);
          if (base.starts_with("libdw") || base.starts_with("libelf")) {
            static_cast<std::vector<std::string>*>(out)->push_back(
                fmt::format("{} {}", base, ReadElfBuildId(name).value_or("?")));
          }
          return 0;
        },
        &libraries);
    std::sort(libraries.begin(), libraries.end());
    return fmt::format("{} ({})", own, fmt::join(libraries, ", "));
  }();
  return id;
}

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

// Where the tables start: aligned for their 8-byte fields.
size_t TablesAt(size_t identity_size) { return (kHeaderSize + identity_size + 7) & ~size_t{7}; }

std::vector<std::byte> Encode(const std::string& identity, const KnownFrames& known) {
  std::vector<std::byte> out;
  Append(out, kMagic, sizeof(kMagic));
  AppendU32(out, 0);  // CRC, below
  AppendU32(out, identity.size());
  AppendU32(out, known.ranges().size());
  AppendU32(out, known.runs().size());
  AppendU32(out, known.frames().size());
  AppendU32(out, known.strings().size());
  Append(out, identity.data(), identity.size());
  out.resize(TablesAt(identity.size()));
  Append(out, known.ranges().data(), known.ranges().size());
  Append(out, known.runs().data(), known.runs().size());
  Append(out, known.frames().data(), known.frames().size());
  Append(out, known.strings().data(), known.strings().size());
  const uint32_t crc = Crc32(std::span(out).subspan(8));
  std::memcpy(out.data() + 4, &crc, sizeof(crc));
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

// `bytes` are in memory `owner` keeps, which the tables go on pointing into.
std::optional<KnownFrames> Decode(std::span<const std::byte> bytes, const std::string& identity,
                                  std::shared_ptr<const void> owner) {
  if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return std::nullopt;
  }
  uint32_t header[6];
  std::memcpy(header, bytes.data() + 4, sizeof(header));
  // The identity first: a file of another key costs no checksum.
  size_t at = kHeaderSize;
  if (header[1] != identity.size() || bytes.size() - at < identity.size() ||
      std::memcmp(bytes.data() + at, identity.data(), identity.size()) != 0 ||
      Crc32(bytes.subspan(8)) != header[0]) {
    return std::nullopt;
  }
  at = TablesAt(identity.size());
  KnownFrames::Tables tables;
  if (at > bytes.size() || !Take(bytes, at, header[2], tables.ranges) ||
      !Take(bytes, at, header[3], tables.runs) || !Take(bytes, at, header[4], tables.frames) ||
      header[5] != bytes.size() - at) {
    return std::nullopt;
  }
  tables.strings = std::string_view(reinterpret_cast<const char*>(bytes.data() + at), header[5]);
  KnownFrames known(tables, std::move(owner));
  if (!known.Valid()) return std::nullopt;
  return known;
}

// Read into memory of its own, once, and used there: not through a
// mapping of the file, which a truncation or an in-place rewrite (by
// another program, or another NFS client renaming its own copy over it)
// would change after Valid(): a SIGBUS, or tables no longer checked.
// That costs goleaf's 1.5 MB 1.4 ms where the mapping took 0.65 (fresh
// pages, whichever way they are filled: read into a malloc'd buffer 1.9,
// sent into a memfd 1.4-1.9).
std::optional<KnownFrames> Load(const std::string& path, const std::string& identity) {
  auto fd = OpenRegularFile(path, OpenRegularOptions{.no_follow = true});
  struct stat st;
  if (!fd || fstat(fd->get(), &st) != 0 || st.st_uid != geteuid() || st.st_size > kMaxFileSize ||
      st.st_size < static_cast<off_t>(kHeaderSize)) {
    return std::nullopt;
  }
  const auto size = static_cast<size_t>(st.st_size);
  // Page-aligned, its pages made in one go (MAP_POPULATE) rather than
  // faulted in one by one as the read fills them.
  void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (memory == MAP_FAILED) return std::nullopt;
  std::shared_ptr<void> owner(memory, [size](void* p) { munmap(p, size); });
  auto* bytes = static_cast<std::byte*>(memory);
  // Fewer: an error, or the file cut since fstat.
  if (PreadAll(fd->get(), std::span(bytes, size), 0) != size) return std::nullopt;
  return Decode(std::span<const std::byte>(bytes, size), identity, std::move(owner));
}

}  // namespace

std::string FrameCache::PathOf(const std::string& dir, const FrameCacheKey& key) {
  return fmt::format("{}/{}.{}.frames", dir, FileSafeId(key.build_id), FileSafe(key.display_name));
}

std::string FrameCache::Identity(const FrameCacheKey& key) {
  std::string debug = "none";
  if (struct stat st; !key.debug.empty() && stat(key.debug.c_str(), &st) == 0) {
    debug = fmt::format("{} {} {} {}.{:09}", key.debug, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                        st.st_mtim.tv_nsec);
  } else if (!key.debug.empty()) {
    debug = key.debug + " (unreadable)";
  }
  return fmt::format("sample frames; recorder {}; binary {} {}; name {}; debug {}", OwnBuildId(),
                     key.build_id, key.fingerprint, key.display_name, debug);
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

FrameCache FrameCache::Open(const std::string& dir, const FrameCacheKey& key) {
  FrameCache cache;
  if (dir.empty() || key.build_id.empty() ||
      key.build_id.find_first_not_of("0123456789abcdef") != std::string::npos ||
      OwnBuildId().empty() || !MakeOwnDirectory(dir)) {
    return cache;
  }
  cache.enabled_ = true;
  cache.path_ = PathOf(dir, key);
  cache.identity_ = Identity(key);
  if (auto known = Load(cache.path_, cache.identity_)) {
    cache.known_ = std::move(*known);
    cache.loaded_ranges_ = cache.known_.ranges().size();
  }
  return cache;
}

void FrameCache::Save() {
  if (!enabled_ || known_.ranges().size() == loaded_ranges_) return;
  const std::vector<std::byte> bytes = Encode(identity_, known_);
  std::string temporary = path_ + ".XXXXXX";
  UniqueFd fd(mkostemp(temporary.data(), O_CLOEXEC));  // 0600, a name no one has
  if (!fd.valid()) return;
  const bool written =
      write(fd.get(), bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  fd = UniqueFd();
  if (!written || rename(temporary.c_str(), path_.c_str()) != 0) {
    unlink(temporary.c_str());
    return;
  }
  loaded_ranges_ = known_.ranges().size();
}

}  // namespace sample::record
