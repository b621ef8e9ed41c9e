#include "record/facts/jit_maps.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "libsample/model/process_table.h"
#include "libsample/regular_file.h"
#include "libsample/symbols/perf_map.h"

namespace sample::record {

void JitMaps::NoteMapping(uint32_t pid, std::string_view path, const ProcessFiles& files) {
  if (!IsAnonymousCode(path)) return;
  auto [it, inserted] = jits_.try_emplace(pid);
  if (!inserted) return;
  // While the process lives: its user and the pid it knows itself by (in
  // a pid namespace of its own, the one its map is named after).
  struct stat st;
  it->second.uid = stat(fmt::format("/proc/{}", pid).c_str(), &st) == 0 ? st.st_uid : 0;
  it->second.namespace_pid = files.NamespacePid(pid);
}

void JitMaps::NoteExit(uint32_t pid, const ProcessFiles& files) {
  auto it = jits_.find(pid);
  if (it == jits_.end() || it->second.exited) return;
  // Opened now (a file of a namespace that may go), read at the close:
  // reading megabytes here would hold up the draining of the rings.
  it->second.exited = true;
  Open(pid, it->second, files);
}

void JitMaps::Open(uint32_t pid, Jit& jit, const ProcessFiles& files) {
  jit.fd = UniqueFd();
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
  jit.fd = std::move(*fd);
}

std::string JitMaps::Read(Jit& jit) {
  std::string text;
  struct stat st;
  if (jit.fd.get() < 0 || fstat(jit.fd.get(), &st) != 0) return text;
  const uint64_t size = std::min<uint64_t>(static_cast<uint64_t>(st.st_size), kMaxMapBytes);
  text.resize(size);
  text.resize(PreadAll(jit.fd.get(), std::as_writable_bytes(std::span(text)), 0));
  // A map cut at the bound ends at its last whole line.
  if (static_cast<uint64_t>(st.st_size) > size) {
    const size_t last_line = text.rfind('\n');
    text.resize(last_line == std::string::npos ? 0 : last_line + 1);
    jit.note = fmt::format("/tmp/perf-{}.map: only its first {} MiB stored", jit.namespace_pid,
                           kMaxMapBytes >> 20);
  }
  return text;
}

std::vector<RecordedPerfMap> JitMaps::Collect(const ProcessFiles& files,
                                              std::vector<std::string>* notes) {
  std::vector<RecordedPerfMap> maps;
  for (auto& [pid, jit] : jits_) {
    if (!jit.exited) Open(pid, jit, files);  // as it is now
    std::string text = Read(jit);
    if (!jit.note.empty()) notes->push_back(jit.note);
    if (!text.empty()) maps.push_back(RecordedPerfMap{pid, std::move(text)});
  }
  std::sort(maps.begin(), maps.end(),
            [](const RecordedPerfMap& a, const RecordedPerfMap& b) { return a.pid < b.pid; });
  return maps;
}

}  // namespace sample::record
