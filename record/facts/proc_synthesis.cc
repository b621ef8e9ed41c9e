#include "record/facts/proc_synthesis.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "libsample/perf/record_builder.h"
#include "libsample/perf/record_walker.h"
#include "libsample/unique_fd.h"

namespace sample::record {
namespace {

// Reads a whole /proc file with plain read(2)s (no stdio: this runs for
// every process on the machine with -a). Returns false if it cannot open.
bool ReadProcFile(const char* path, std::vector<char>& buffer, std::string_view* out) {
  UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  if (buffer.size() < 64 * 1024) buffer.resize(64 * 1024);
  size_t used = 0;
  for (;;) {
    if (used == buffer.size()) buffer.resize(buffer.size() * 2);
    const ssize_t n = read(fd.get(), buffer.data() + used, buffer.size() - used);
    if (n < 0) return false;
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  *out = std::string_view(buffer.data(), used);
  return true;
}

bool IsNumber(const char* s) {
  if (*s == '\0') return false;
  for (; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9') return false;
  }
  return true;
}

uint64_t Hex(std::string_view s) {
  uint64_t value = 0;
  std::from_chars(s.data(), s.data() + s.size(), value, 16);
  return value;
}

// Splits off the next space-separated field of `line`.
std::string_view NextField(std::string_view& line) {
  const size_t start = line.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(start);
  const size_t end = line.find(' ');
  const std::string_view field = line.substr(0, end);
  line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  return field;
}

}  // namespace

void ProcSynthesizer::AddProcess(pid_t pid, std::vector<std::byte>& out) {
  const RecordBuilder builder(attr_, id_, time_);
  const uint32_t upid = static_cast<uint32_t>(pid);

  // Threads first: their names.
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/task", pid);
  DIR* dir = opendir(path);
  if (dir == nullptr) return;
  ++counts_.processes;
  while (dirent* entry = readdir(dir)) {
    if (!IsNumber(entry->d_name)) continue;
    char comm_path[352];
    snprintf(comm_path, sizeof(comm_path), "/proc/%d/task/%s/comm", pid, entry->d_name);
    std::string_view comm;
    if (!ReadProcFile(comm_path, buffer_, &comm)) continue;
    if (!comm.empty() && comm.back() == '\n') comm.remove_suffix(1);
    builder.AppendComm(out, upid, static_cast<uint32_t>(atoi(entry->d_name)), comm);
    ++counts_.threads;
  }
  closedir(dir);

  // Then the executable mappings (every mapping when the sideband has the
  // data ones too: -d), e.g.
  // "7f12a0000000-7f12a0020000 r-xp 00002000 fe:01 1234 /usr/lib/libc.so.6"
  snprintf(path, sizeof(path), "/proc/%d/maps", pid);
  std::string_view maps;
  if (!ReadProcFile(path, buffer_, &maps)) return;
  while (!maps.empty()) {
    const size_t eol = maps.find('\n');
    std::string_view line = maps.substr(0, eol);
    maps.remove_prefix(eol == std::string_view::npos ? maps.size() : eol + 1);
    const std::string_view range = NextField(line);
    const std::string_view perms = NextField(line);
    if (perms.size() < 4 || (perms[2] != 'x' && !data_mappings_)) continue;
    const std::string_view offset = NextField(line);
    const std::string_view device = NextField(line);
    const std::string_view inode = NextField(line);
    const size_t name_start = line.find_first_not_of(' ');
    std::string_view name =
        name_start == std::string_view::npos ? std::string_view("//anon") : line.substr(name_start);
    const size_t dash = range.find('-');
    const size_t colon = device.find(':');
    if (dash == std::string_view::npos || colon == std::string_view::npos) continue;
    SyntheticMmap m;
    m.pid = upid;
    m.tid = upid;
    m.addr = Hex(range.substr(0, dash));
    m.len = Hex(range.substr(dash + 1)) - m.addr;
    m.pgoff = Hex(offset);
    m.major = static_cast<uint32_t>(Hex(device.substr(0, colon)));
    m.minor = static_cast<uint32_t>(Hex(device.substr(colon + 1)));
    std::from_chars(inode.data(), inode.data() + inode.size(), m.inode);
    m.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
             (perms[2] == 'x' ? PROT_EXEC : 0);
    m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
    m.filename = name;
    builder.AppendMmap2(out, m);
    ++counts_.mappings;
  }
}

void ProcSynthesizer::AddAllProcesses(std::vector<std::byte>& out) {
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return;
  while (dirent* entry = readdir(dir)) {
    if (IsNumber(entry->d_name)) AddProcess(atoi(entry->d_name), out);
  }
  closedir(dir);
}

format::RecordsChunk SynthesizeRunningTargets(const RecordTarget& target,
                                              const perf_event_attr& attr, uint64_t id,
                                              uint64_t time, bool data_mappings,
                                              PostmortemFacts& facts) {
  std::vector<std::byte> synthesized;
  ProcSynthesizer synthesizer(attr, id, time, data_mappings);
  if (target.synthesize_all) {
    synthesizer.AddAllProcesses(synthesized);
  } else {
    for (pid_t pid : target.processes) synthesizer.AddProcess(pid, synthesized);
  }
  ForEachRecord(synthesized, [&](const perf_event_header& h, std::span<const std::byte> r) {
    facts.Observe(h, r, attr);
  });
  format::RecordsChunk chunk;
  chunk.record_count = synthesizer.counts().threads + synthesizer.counts().mappings;
  chunk.time_min = chunk.time_max = time;
  chunk.cpu_runs.push_back({synthesized.size(), 0});
  chunk.records = std::move(synthesized);
  return chunk;
}

}  // namespace sample::record
