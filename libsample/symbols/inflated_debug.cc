#include "libsample/symbols/inflated_debug.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "libsample/cache_dir.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"

namespace sample {
namespace {

bool HasCompressedSections(Elf* elf) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) != nullptr && (shdr.sh_flags & SHF_COMPRESSED) != 0) return true;
  }
  return false;
}

// The cached copy is taken only as we wrote it: ours, regular, its build-id.
bool UsableCopy(const std::string& path, const std::string& build_id) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    return false;
  }
  auto id = ReadElfBuildId(path);
  return id && *id == build_id;
}

// Writes `debug` to `out` with every compressed section inflated, through
// a temporary file renamed into place (a reader never sees half a file).
bool WriteInflated(const std::string& debug, const std::string& out) {
  const std::string temporary = fmt::format("{}.{}.tmp", out, getpid());
  std::error_code error;
  std::filesystem::copy_file(debug, temporary, std::filesystem::copy_options::overwrite_existing,
                             error);
  if (error) return false;
  const int fd = open(temporary.c_str(), O_RDWR | O_CLOEXEC);
  bool ok = fd >= 0;
  Elf* elf = ok ? elf_begin(fd, ELF_C_RDWR, nullptr) : nullptr;
  ok = elf != nullptr;
  for (Elf_Scn* scn = ok ? elf_nextscn(elf, nullptr) : nullptr; ok && scn != nullptr;
       scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      ok = false;
    } else if ((shdr.sh_flags & SHF_COMPRESSED) != 0) {
      ok = elf_compress(scn, 0, 0) >= 0;
    }
  }
  ok = ok && elf_update(elf, ELF_C_WRITE) >= 0;
  if (elf != nullptr) elf_end(elf);
  if (fd >= 0) close(fd);
  ok = ok && rename(temporary.c_str(), out.c_str()) == 0;
  if (!ok) unlink(temporary.c_str());
  return ok;
}

}  // namespace

std::string InflatedDebugCacheDir() { return UserCacheDir("debug"); }

std::string InflatedDebugFile(const std::string& debug, const std::string& build_id) {
  if (debug.empty() || build_id.empty() ||
      build_id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return debug;
  }
  {
    auto file = ElfFile::Open(debug);
    if (!file || !HasCompressedSections(file->get())) return debug;
  }
  const std::string dir = InflatedDebugCacheDir();
  if (dir.empty() || !MakeOwnDirectory(dir)) return debug;
  const std::string cached = fmt::format("{}/{}.debug", dir, build_id);
  if (UsableCopy(cached, build_id)) return cached;
  if (WriteInflated(debug, cached) && UsableCopy(cached, build_id)) return cached;
  return debug;
}

}  // namespace sample
