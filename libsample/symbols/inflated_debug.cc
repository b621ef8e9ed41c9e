#include "libsample/symbols/inflated_debug.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "libsample/cache_dir.h"
#include "libsample/file_owner.h"
#include "libsample/regular_file.h"
#include "libsample/symbols/compressed_sections.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample {
namespace {

// The file open as `fd`, by a path that leads to that open file whatever
// happens at the name it was opened by.
std::string FdPath(int fd) { return fmt::format("/proc/self/fd/{}", fd); }

// The cached copy `name` is taken only as we wrote it: ours, regular, its
// build-id. Read through the fd OpenCacheFile checked.
bool UsableCopy(int dir_fd, const std::string& name, const std::string& build_id) {
  auto fd = OpenCacheFile(dir_fd, name);
  if (!fd) return false;
  auto id = ReadElfBuildId(FdPath(fd->get()));
  if (!id || *id != build_id) return false;
  MarkCacheFileUsed(fd->get());
  return true;
}

// Copies the regular file `from` into `to`, at most `limit` bytes.
bool CopyBounded(const std::string& from, CacheFileWriter& to, uint64_t limit) {
  auto in = OpenRegularFile(from);
  struct stat st {};
  if (!in || fstat(in->get(), &st) != 0 || static_cast<uint64_t>(st.st_size) > limit) {
    return false;
  }
  std::vector<std::byte> buffer(size_t{1} << 20);
  for (uint64_t offset = 0; offset < static_cast<uint64_t>(st.st_size);) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), st.st_size - offset));
    const size_t got = PreadAll(in->get(), std::span(buffer).first(want), offset);
    if (got == 0 || !to.Write(std::span(buffer).first(got))) return false;
    offset += got;
  }
  return true;
}

// Writes `debug` as `name` in `dir_fd` with every compressed section
// inflated. The sizes are judged again on the copy, which is ours: the
// original may have changed since it was judged.
bool WriteInflated(const std::string& debug, int dir_fd, const std::string& name) {
  auto writer = CacheFileWriter::Create(dir_fd, name);
  if (!writer || !CopyBounded(debug, *writer, kMaxInflatedDebugBytes)) return false;
  struct stat st {};
  Elf* elf = fstat(writer->fd(), &st) == 0 ? elf_begin(writer->fd(), ELF_C_RDWR, nullptr) : nullptr;
  bool ok = elf != nullptr && elf_kind(elf) == ELF_K_ELF &&
            JudgeCompression(CountCompressedSections(elf), static_cast<uint64_t>(st.st_size)) ==
                InflateVerdict::kCache;
  for (Elf_Scn* scn = ok ? elf_nextscn(elf, nullptr) : nullptr; ok && scn != nullptr;
       scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      ok = false;
    } else if ((shdr.sh_flags & SHF_COMPRESSED) != 0 && shdr.sh_type != SHT_NOBITS) {
      ok = elf_compress(scn, 0, 0) >= 0;
    }
  }
  ok = ok && elf_update(elf, ELF_C_WRITE) >= 0;
  if (elf != nullptr) elf_end(elf);
  return ok && writer->Commit();
}

}  // namespace

std::string InflatedDebugCacheDir() { return UserCacheDir("debug"); }

std::string InflatedDebugFile(const std::string& debug, const std::string& build_id) {
  if (debug.empty() || build_id.empty() ||
      build_id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return debug;
  }
  // Judged again, on the fd it reads, by whatever opens the path returned
  // (DwarfFile::Open, CfiRows): the file may change in between.
  InflateVerdict verdict = InflateVerdict::kNone;
  bool trusted = false;
  if (auto file = ElfFile::Open(debug)) {
    struct stat st {};
    if (fstat(file->fd(), &st) != 0) return debug;
    verdict =
        JudgeCompression(CountCompressedSections(file->get()), static_cast<uint64_t>(st.st_size));
    // The copy is kept under the build-id the file claims, and later runs
    // take it for any binary of that build-id: only a file of root or of
    // this user that no one else may write is copied (root's cache is not
    // filled with a user's file claiming libc's build-id).
    trusted = (st.st_uid == 0 || st.st_uid == geteuid()) && WritableOnlyByOwner(st);
  }
  if (verdict == InflateVerdict::kBomb) return "";
  if (verdict != InflateVerdict::kCache || !trusted) return debug;
  auto dir = OpenCacheDirectory(InflatedDebugCacheDir());
  if (!dir) return debug;
  const std::string name = build_id + ".debug";
  const std::string cached = fmt::format("{}/{}", dir->path, name);
  if (UsableCopy(dir->fd.get(), name, build_id)) return cached;
  if (!WriteInflated(debug, dir->fd.get(), name) || !UsableCopy(dir->fd.get(), name, build_id)) {
    return debug;
  }
  TrimCacheDirectory(dir->fd.get(), CacheTrimPolicy{.suffix = ".debug",
                                                    .max_bytes = kMaxInflatedDebugCacheBytes,
                                                    .max_unused_seconds = kDebugCacheUnusedSeconds,
                                                    .keep = name});
  return cached;
}

}  // namespace sample
