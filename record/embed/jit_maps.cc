#include "record/embed/jit_maps.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "formats/sample_file_format.h"
#include "libsample/model/process_table.h"
#include "libsample/regular_file.h"
#include "libsample/symbols/perf_map.h"

namespace sample::record {
namespace {

// The kPerfMap payload's bytes before the text: the pid.
constexpr uint64_t kPayloadHead = sizeof(uint32_t);
// The ratio a map may reach at level 1, well under what readers take: -z
// up to 22 squeezes a map's lines harder, never 8x harder than level 1.
constexpr uint64_t kMapRatio = format::kMaxCompressionRatio / 8;

// `text` cut to its last whole line within `limit` bytes (nothing for a
// limit of 0, even when `text` starts with a newline).
std::string_view LinesWithin(std::string_view text, uint64_t limit) {
  if (text.size() <= limit) return text;
  if (limit == 0) return {};
  const size_t newline = text.rfind('\n', limit - 1);
  return newline == std::string_view::npos ? std::string_view() : text.substr(0, newline + 1);
}

}  // namespace

size_t PerfMapPayloadPrefix(std::string_view text) {
  const uint64_t ratio_free = format::kRatioFreeRawSize - kPayloadHead;
  if (text.size() <= ratio_free) return text.size();
  // Only the size matters: compress into a buffer of the bound, once.
  const size_t bound = ZSTD_compressBound(text.size());
  std::unique_ptr<char[]> out(new char[bound]);
  const size_t stored = ZSTD_compress(out.get(), bound, text.data(), text.size(), 1);
  if (!ZSTD_isError(stored) && (text.size() + kPayloadHead) / kMapRatio <= stored) {
    return text.size();
  }
  return LinesWithin(text, ratio_free).size();
}

void JitMaps::NoteMapping(uint32_t pid, std::string_view path, const ProcessFiles& files) {
  if (!IsAnonymousCode(path)) return;
  auto [it, inserted] = jits_.try_emplace(pid);
  if (!inserted) return;
  // While the process lives: its user and the pid it knows itself by (in
  // a pid namespace of its own, the one its map is named after).
  it->second.uid = files.Uid(pid);
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
  // A regular file, not through a link (a link's target is another file,
  // whoever owns the link).
  auto fd = files.Open(pid, path, OpenRegularOptions{.no_follow = true});
  if (!fd) {
    // No map at all is what a program that is no JIT leaves.
    if (fd.error().sys_errno != ENOENT) jit.note = fd.error().message;
    return;
  }
  if (!jit.uid) {
    jit.note =
        fmt::format("{}: ignored: process {} ended before its user could be read", path, pid);
    return;
  }
  struct stat st;
  if (fstat(fd->get(), &st) != 0) return;
  // The file the process's own user could have written, no one else's.
  if (auto trusted = CheckPerfMapFile(path, st, PerfMapOptions{.user = *jit.uid}); !trusted) {
    jit.note = trusted.error().message;
    return;
  }
  jit.fd = std::move(*fd);
}

std::string JitMaps::Read(Jit& jit, uint64_t limit) {
  std::string text;
  struct stat st;
  if (jit.fd.get() < 0 || fstat(jit.fd.get(), &st) != 0) return text;
  text.resize(std::min(static_cast<uint64_t>(st.st_size), limit));
  text.resize(PreadAll(jit.fd.get(), std::as_writable_bytes(std::span(text)), 0));
  return text;
}

void JitMaps::Collect(const ProcessFiles& files, std::vector<std::string>* notes,
                      const std::function<void(RecordedPerfMap&&)>& take) {
  std::vector<uint32_t> pids;
  for (const auto& [pid, jit] : jits_) pids.push_back(pid);
  // Pid order: which maps the total leaves out does not depend on hashing.
  std::sort(pids.begin(), pids.end());
  uint64_t total = 0;
  for (uint32_t pid : pids) {
    Jit& jit = jits_[pid];
    if (!jit.exited) Open(pid, jit, files);  // as it is now
    if (!jit.note.empty()) notes->push_back(jit.note);
    // Saturating: a total past the bound must leave nothing, not wrap to
    // a whole map's worth again.
    const uint64_t left = total < limits_.max_total_bytes ? limits_.max_total_bytes - total : 0;
    const uint64_t limit = std::min(limits_.max_map_bytes, left);
    std::string text = Read(jit, limit + 1);  // one more byte: whether it was cut
    const std::string path = fmt::format("/tmp/perf-{}.map", jit.namespace_pid);
    if (text.size() > limit) {
      text.resize(LinesWithin(text, limit).size());
      const std::string stored = text.empty()
                                     ? std::string("not stored")
                                     : fmt::format("only its first {} bytes stored", text.size());
      notes->push_back(limit == limits_.max_map_bytes
                           ? fmt::format("{}: {} (a map's bound)", path, stored)
                           : fmt::format("{}: {}: the recording keeps {} MiB of perf maps in all",
                                         path, stored, limits_.max_total_bytes >> 20));
    }
    if (const size_t keep = PerfMapPayloadPrefix(text); keep < text.size()) {
      notes->push_back(fmt::format(
          "{}: only its first {} of {} bytes stored: the rest repeats itself past the {}:1 "
          "compression a reader takes of a chunk",
          path, keep, text.size(), format::kMaxCompressionRatio));
      text.resize(keep);
    }
    total += text.size();
    if (!text.empty()) take(RecordedPerfMap{pid, std::move(text)});
  }
}

std::vector<RecordedPerfMap> JitMaps::Collect(const ProcessFiles& files,
                                              std::vector<std::string>* notes) {
  std::vector<RecordedPerfMap> maps;
  Collect(files, notes, [&](RecordedPerfMap&& map) { maps.push_back(std::move(map)); });
  return maps;
}

format::Metadata JitMaps::Facts() const {
  format::Metadata facts;
  if (jits_.empty()) return facts;
  if (const std::string boot = BootId(); !boot.empty()) facts.emplace_back("boot_id", boot);
  for (const auto& [pid, jit] : jits_) {
    if (jit.uid) facts.emplace_back(fmt::format("jit_uid {}", pid), fmt::format("{}", *jit.uid));
  }
  std::sort(facts.begin(), facts.end());
  return facts;
}

}  // namespace sample::record
