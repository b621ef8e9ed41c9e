#include "record/facts/jit_maps.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "libsample/symbols/perf_map.h"

namespace sample::record {

bool IsAnonymousCode(std::string_view path) {
  return path == "//anon" || path.starts_with("[anon") || path.starts_with("/memfd:");
}

void JitMaps::NoteMapping(uint32_t pid, std::string_view path, const ProcessFiles& files) {
  if (!IsAnonymousCode(path)) return;
  auto [it, inserted] = jits_.try_emplace(pid);
  if (!inserted) return;
  // While the process lives: its user and the pid it knows itself by.
  struct stat st;
  it->second.uid = stat(fmt::format("/proc/{}", pid).c_str(), &st) == 0 ? st.st_uid : 0;
  it->second.namespace_pid = files.InOtherNamespace(pid) ? files.NamespacePid(pid) : pid;
}

void JitMaps::NoteExit(uint32_t pid, const ProcessFiles& files) {
  auto it = jits_.find(pid);
  if (it != jits_.end() && !it->second.exited) {
    Read(pid, it->second, files);
    it->second.exited = true;
  }
}

void JitMaps::Read(uint32_t pid, Jit& jit, const ProcessFiles& files) {
  jit.text.clear();
  jit.note.clear();
  const std::string path = fmt::format("/tmp/perf-{}.map", jit.namespace_pid);
  // As the report reads maps: a regular file, not through a link, owned by
  // the process's user or root and writable by no one else.
  auto fd = files.Open(pid, path, OpenRegularOptions{.no_follow = true});
  if (!fd) {
    // No map at all is what a program that is no JIT leaves.
    if (fd.error().sys_errno != ENOENT) jit.note = fd.error().message;
    return;
  }
  struct stat st;
  if (fstat(fd->get(), &st) != 0) return;
  if (auto trusted = CheckPerfMapFile(path, st, PerfMapOptions{jit.uid, false}); !trusted) {
    jit.note = trusted.error().message;
    return;
  }
  const uint64_t size = std::min<uint64_t>(static_cast<uint64_t>(st.st_size), kMaxMapBytes);
  jit.text.resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = read(fd->get(), jit.text.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  jit.text.resize(done);
  // A map cut at the bound ends at its last whole line.
  if (static_cast<uint64_t>(st.st_size) > size) {
    jit.text.resize(jit.text.rfind('\n') == std::string::npos ? 0 : jit.text.rfind('\n') + 1);
    jit.note = fmt::format("{}: only its first {} MiB stored", path, kMaxMapBytes >> 20);
  }
}

std::vector<RecordedPerfMap> JitMaps::Collect(const ProcessFiles& files,
                                              std::vector<std::string>* notes) {
  std::vector<RecordedPerfMap> maps;
  for (auto& [pid, jit] : jits_) {
    if (!jit.exited) Read(pid, jit, files);
    if (!jit.note.empty()) notes->push_back(jit.note);
    if (!jit.text.empty()) maps.push_back(RecordedPerfMap{pid, jit.text});
  }
  std::sort(maps.begin(), maps.end(),
            [](const RecordedPerfMap& a, const RecordedPerfMap& b) { return a.pid < b.pid; });
  return maps;
}

}  // namespace sample::record
