#include "report/annotate_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "libsample/byte_reader.h"
#include "libsample/cache_dir.h"
#include "libsample/symbols/own_build.h"
#include "libsample/crc32.h"
#include "libsample/regular_file.h"
#include "libsample/symbols/perf_buildid_cache.h"
#include "libsample/unique_fd.h"

namespace sample::report {
namespace {

constexpr char kMagic[8] = {'S', 'M', 'P', 'L', 'A', 'N', 'X', '2'};
// No index is near this; a larger file is not ours.
constexpr uint64_t kMaxFileBytes = uint64_t{256} << 20;

// "device:inode size mtime" of `path`, or "-" when it cannot be stat()ed.
// Not the change time: perf's build-id cache hard-links the binaries it
// sees, which changes theirs. A rebuilt file has another modification
// time, a replaced one (a package upgrade) another inode.
std::string FileIdentity(const std::string& path) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0) return "-";
  return fmt::format("{}:{} {} {}.{:09}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec);
}

// A /proc file's text (up to 1 MiB), "" when unreadable.
std::string ProcText(const std::string& path) {
  auto text = ReadBoundedFile(path, size_t{1} << 20);
  return text ? *text : "";
}

// FNV-1a: the file name of a key (the key itself is in the file).
uint64_t KeyHash(std::string_view key) {
  uint64_t hash = 0xcbf29ce484222325;
  for (char c : key) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3;
  return hash;
}

std::string NameOf(const std::string& key) { return fmt::format("{:016x}.idx", KeyHash(key)); }

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : in_(bytes) {}
  bool U8(uint8_t* v) { return in_.Read(v); }
  bool Bool(bool* v) {
    uint8_t byte = 0;
    if (!in_.Read(&byte) || byte > 1) return false;
    *v = byte == 1;
    return true;
  }
  bool U32(uint32_t* v) { return in_.Read(v); }
  bool U64(uint64_t* v) { return in_.Read(v); }
  bool Str(std::string* s) {
    uint32_t size = 0;
    std::span<const std::byte> bytes;
    if (!in_.Read(&size) || !in_.ReadBytes(size, &bytes)) return false;
    s->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return true;
  }
  // A count of items of at least `min_bytes` each that the rest can hold.
  bool Count(uint32_t* n, size_t min_bytes) { return U32(n) && *n <= in_.remaining() / min_bytes; }
  bool Strings(std::vector<std::string>* out) {
    uint32_t n = 0;
    if (!Count(&n, 4)) return false;
    out->resize(n);
    for (std::string& s : *out) {
      if (!Str(&s)) return false;
    }
    return true;
  }
  bool empty() const { return in_.empty(); }

 private:
  ByteReader in_;
};

void EncodeIndex(const AnnotateIndex& index, Writer& w) {
  w.Str(index.event);
  w.U64(index.event_samples);
  w.U32(static_cast<uint32_t>(index.dsos.size()));
  for (const IndexedDso& dso : index.dsos) {
    w.Str(dso.path);
    w.Str(dso.build_id);
    w.U8(dso.jit ? 1 : 0);
  }
  w.U32(static_cast<uint32_t>(index.functions.size()));
  for (const IndexedFunction& f : index.functions) {
    w.U32(f.function);
    w.Str(f.name);
    w.Str(f.short_name);
    w.Str(f.signature);
    w.U32(f.dso);
    w.U8(f.kernel ? 1 : 0);
    w.U64(f.some_offset);
    w.U64(f.samples);
    w.U64(f.period);
    w.U32(static_cast<uint32_t>(f.by_offset.size()));
    for (const OffsetHits& h : f.by_offset) {
      w.U64(h.offset);
      w.U64(h.samples);
      w.U64(h.period);
    }
  }
}

bool DecodeFunction(Reader& r, size_t dsos, IndexedFunction& f) {
  uint32_t hits = 0;
  if (!r.U32(&f.function) || !r.Str(&f.name) || !r.Str(&f.short_name) || !r.Str(&f.signature) ||
      !r.U32(&f.dso) || f.dso >= dsos || !r.Bool(&f.kernel) || !r.U64(&f.some_offset) ||
      !r.U64(&f.samples) || !r.U64(&f.period) || !r.Count(&hits, 24)) {
    return false;
  }
  f.by_offset.resize(hits);
  for (size_t i = 0; i < hits; ++i) {
    OffsetHits& h = f.by_offset[i];
    if (!r.U64(&h.offset) || !r.U64(&h.samples) || !r.U64(&h.period)) return false;
    // In order, as the view's lookups need.
    if (i > 0 && h.offset <= f.by_offset[i - 1].offset) return false;
  }
  return true;
}

bool DecodeIndex(Reader& r, AnnotateIndex& index) {
  uint32_t dsos = 0;
  uint32_t functions = 0;
  if (!r.Str(&index.event) || !r.U64(&index.event_samples) || !r.Count(&dsos, 9)) return false;
  index.dsos.resize(dsos);
  for (IndexedDso& dso : index.dsos) {
    if (!r.Str(&dso.path) || !r.Str(&dso.build_id) || !r.Bool(&dso.jit)) return false;
  }
  if (!r.Count(&functions, 49)) return false;
  index.functions.resize(functions);
  for (IndexedFunction& f : index.functions) {
    if (!DecodeFunction(r, dsos, f)) return false;
  }
  return true;
}

}  // namespace

std::string AnnotateCacheOptions(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& given) {
  static const std::vector<std::string_view> kViewOnly = {
      "annotate", "annotate-source", "disassembler-style",
      "format",   "output",          "jobs",
      "no-cache", "stdio",           "tui",
      "input"};
  std::string out = "options\n";
  for (const auto& [name, values] : given) {
    if (std::ranges::find(kViewOnly, name) != kViewOnly.end()) continue;
    // Each value with its length: no value can end another early.
    out += "option " + name;
    for (const std::string& value : values) out += fmt::format(" {}:{}", value.size(), value);
    out += '\n';
  }
  return out;
}

std::string AnnotateCacheKey(std::string_view options, const std::vector<std::string>& inputs) {
  const std::string& build = OwnBuildIdentity();
  const std::string boot = ProcText("/proc/sys/kernel/random/boot_id");
  char cwd[PATH_MAX];
  if (build.empty() || boot.empty() || getcwd(cwd, sizeof(cwd)) == nullptr) return "";
  // The host's kernel symbols, as this user reads them: this boot, its
  // modules now and whether addresses are shown.
  std::string key = fmt::format(
      "sample-report annotate index 2\nbuild {}\nboot {}modules {:016x}\nkptr_restrict {}euid "
      "{}\ncwd {}\n",
      build, boot, KeyHash(ProcText("/proc/modules")), ProcText("/proc/sys/kernel/kptr_restrict"),
      geteuid(), cwd);
  for (const char* name :
       {"HOME", "PERF_BUILDID_DIR", "DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH"}) {
    const char* value = getenv(name);
    key += fmt::format("env {}{}{}\n", name, value != nullptr ? "=" : "", value ? value : "");
  }
  key += options;
  for (const std::string& input : inputs) {
    char* real = realpath(input.c_str(), nullptr);
    if (real == nullptr) return "";
    const std::string path = real;
    free(real);
    // One this user can no longer read is not reported from the cache.
    const std::string identity = FileIdentity(path);
    if (identity == "-" || access(path.c_str(), R_OK) != 0) return "";
    key += fmt::format("\ninput {} {}", path, identity);
  }
  return key;
}

std::vector<BinaryFingerprint> FingerprintBinaries(
    const std::vector<std::pair<std::string, std::string>>& binaries,
    const BinaryLocatorOptions& locator_options, const RecordedCode& recorded) {
  BinaryLocator locator(locator_options, recorded);
  std::vector<BinaryFingerprint> out;
  for (const auto& [path, build_id] : binaries) {
    const LocatedBinary found = locator.Locate(path, build_id);
    std::string files =
        fmt::format("{} {} | {} {}{}", found.binary, FileIdentity(found.binary), found.debug,
                    FileIdentity(found.debug), found.mismatched ? " | mismatched" : "");
    if (path == "[kernel.kallsyms]" || path == kVdsoPath) {
      const std::string copy = fmt::format("{}/{}/{}/{}", PerfBuildIdCacheDir(), path, build_id,
                                           path == kVdsoPath ? "vdso" : "kallsyms");
      files += fmt::format(" | {} {}", copy, FileIdentity(copy));
    }
    out.push_back(BinaryFingerprint{path, build_id, found.source, std::move(files)});
  }
  return out;
}

EmbeddedBinaries EmbeddedStandIns(
    const std::vector<std::pair<std::string, std::string>>& embedded) {
  EmbeddedBinaries out;
  for (const auto& [path, build_id] : embedded) {
    auto binary = std::make_shared<EmbeddedBinary>();
    binary->path = path;
    binary->build_id = build_id;
    out.Add(std::move(binary));
  }
  return out;
}

std::string EncodeCachedAnnotate(const std::string& key, const CachedAnnotate& cached) {
  Writer w;
  w.out().append(kMagic, sizeof(kMagic));
  w.U32(0);  // the checksum of what follows, set below
  w.Str(key);
  w.U32(static_cast<uint32_t>(cached.warnings.size()));
  for (const std::string& warning : cached.warnings) w.Str(warning);
  w.U32(static_cast<uint32_t>(cached.binaries.size()));
  for (const BinaryFingerprint& b : cached.binaries) {
    w.Str(b.path);
    w.Str(b.build_id);
    w.Str(b.source);
    w.Str(b.found);
  }
  w.U32(static_cast<uint32_t>(cached.embedded.size()));
  for (const auto& [path, build_id] : cached.embedded) {
    w.Str(path);
    w.Str(build_id);
  }
  EncodeIndex(cached.index, w);
  std::string& out = w.out();
  const uint32_t crc = Crc32(std::as_bytes(std::span(out).subspan(sizeof(kMagic) + 4)));
  std::memcpy(out.data() + sizeof(kMagic), &crc, sizeof(crc));
  return out;
}

std::optional<CachedAnnotate> DecodeCachedAnnotate(std::span<const std::byte> bytes,
                                                   const std::string& key) {
  constexpr size_t kHead = sizeof(kMagic) + 4;
  if (bytes.size() < kHead || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return std::nullopt;
  }
  uint32_t crc = 0;
  std::memcpy(&crc, bytes.data() + sizeof(kMagic), sizeof(crc));
  if (Crc32(bytes.subspan(kHead)) != crc) return std::nullopt;
  Reader r(bytes.subspan(kHead));
  CachedAnnotate cached;
  std::string stored_key;
  uint32_t binaries = 0;
  uint32_t embedded = 0;
  if (!r.Str(&stored_key) || stored_key != key || !r.Strings(&cached.warnings) ||
      !r.Count(&binaries, 16)) {
    return std::nullopt;
  }
  cached.binaries.resize(binaries);
  for (BinaryFingerprint& b : cached.binaries) {
    if (!r.Str(&b.path) || !r.Str(&b.build_id) || !r.Str(&b.source) || !r.Str(&b.found)) {
      return std::nullopt;
    }
  }
  if (!r.Count(&embedded, 8)) return std::nullopt;
  cached.embedded.resize(embedded);
  for (auto& [path, build_id] : cached.embedded) {
    if (!r.Str(&path) || !r.Str(&build_id)) return std::nullopt;
  }
  if (!DecodeIndex(r, cached.index) || !r.empty()) return std::nullopt;
  return cached;
}

std::optional<CachedAnnotate> ReadAnnotateCache(const std::string& dir, const std::string& key) {
  if (dir.empty() || key.empty()) return std::nullopt;
  // Through the checked directory (libsample/cache_dir.h), never made here.
  const UniqueFd dir_fd = OpenOwnDirectory(dir, {.create = false});
  if (!dir_fd.valid()) return std::nullopt;
  auto fd = OpenCacheFile(dir_fd.get(), NameOf(key));
  struct stat st;
  if (!fd || fstat(fd->get(), &st) != 0 || st.st_size < 0 ||
      static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
    return std::nullopt;
  }
  std::vector<std::byte> bytes(static_cast<size_t>(st.st_size));
  if (PreadAll(fd->get(), bytes, 0) != bytes.size()) return std::nullopt;
  auto cached = DecodeCachedAnnotate(bytes, key);
  // Used: the last to go when the directory is trimmed.
  if (cached) futimens(fd->get(), nullptr);
  return cached;
}

void WriteAnnotateCache(const std::string& dir, const std::string& key,
                        const CachedAnnotate& cached, size_t max_files) {
  if (dir.empty() || key.empty()) return;
  const UniqueFd dir_fd = OpenOwnDirectory(dir);
  if (!dir_fd.valid()) return;
  const std::string bytes = EncodeCachedAnnotate(key, cached);
  if (bytes.size() > kMaxFileBytes) return;  // it would never be read
  const std::string name = NameOf(key);
  if (!WriteCacheFile(dir_fd.get(), name, std::as_bytes(std::span(bytes)))) return;
  // The least recently used past max_files or kMaxAnnotateCacheBytes, and
  // temporaries an hour old (a run killed while writing).
  TrimCacheDirectory(dir_fd.get(),
                     CacheTrimPolicy{.suffix = ".idx",
                                     .max_bytes = kMaxAnnotateCacheBytes,
                                     .max_files = max_files,
                                     .max_unused_seconds = kAnnotateCacheUnusedSeconds,
                                     .keep = name});
}

}  // namespace sample::report
