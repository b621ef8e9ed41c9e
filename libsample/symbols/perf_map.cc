#include "libsample/symbols/perf_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <numeric>
#include <optional>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "libsample/file_owner.h"
#include "libsample/regular_file.h"
#include "libsample/unique_fd.h"

namespace sample {
namespace {

// A hex number at the front of `s`, with an optional 0x, consumed.
std::optional<uint64_t> TakeHex(std::string_view* s) {
  if (s->starts_with("0x") || s->starts_with("0X")) s->remove_prefix(2);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), value, 16);
  if (ec != std::errc() || end == s->data()) return std::nullopt;
  s->remove_prefix(static_cast<size_t>(end - s->data()));
  return value;
}

// One line; nullopt if malformed.
std::optional<PerfMapSymbol> ParseLine(std::string_view line) {
  PerfMapSymbol symbol;
  auto start = TakeHex(&line);
  if (!start || !line.starts_with(' ')) return std::nullopt;
  line.remove_prefix(1);
  auto size = TakeHex(&line);
  if (!size || !line.starts_with(' ')) return std::nullopt;
  line.remove_prefix(1);
  if (line.empty() || *start + *size < *start) return std::nullopt;
  symbol.start = *start;
  symbol.size = *size;
  symbol.name = std::string(line);
  return symbol;
}

uint64_t End(const PerfMapSymbol& symbol) {
  return symbol.start + std::max<uint64_t>(symbol.size, 1);
}

}  // namespace

PerfMap PerfMap::Parse(std::string_view text) {
  PerfMap map;
  std::vector<PerfMapSymbol> in_order;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      ++map.blank_lines_;
      continue;
    }
    if (auto symbol = ParseLine(line)) {
      in_order.push_back(std::move(*symbol));
    } else {
      ++map.malformed_lines_;
    }
  }
  std::vector<size_t> order(in_order.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return in_order[a].start < in_order[b].start; });
  for (size_t i : order) {
    map.symbols_.push_back(std::move(in_order[i]));
    map.order_.push_back(i);
    const uint64_t end = End(map.symbols_.back());
    map.max_end_.push_back(map.max_end_.empty() ? end : std::max(map.max_end_.back(), end));
  }
  return map;
}

Result<void> CheckPerfMapFile(const std::string& path, const struct stat& st,
                              const PerfMapOptions& options) {
  if (options.force) return {};
  if (st.st_uid != options.user) {
    return Fail(fmt::format("{}: ignored: owned by uid {}, not by the process's user (uid {})",
                            path, st.st_uid, options.user));
  }
  // Writable by others, anyone could have put names on the code (a
  // private group of the owner's lets no one else in: umask 002's 0664).
  if (!WritableOnlyByOwner(st)) {
    return Fail(fmt::format("{}: ignored: writable by {} (mode {:04o})", path, WhoElseMayWrite(st),
                            st.st_mode & 07777));
  }
  // A JIT writes its map, so its owner can read it.
  if ((st.st_mode & S_IRUSR) == 0) {
    return Fail(fmt::format("{}: ignored: not readable by its owner (mode {:04o})", path,
                            st.st_mode & 07777));
  }
  // The owner was only claimed: show no one a file they could not read.
  if (options.shown_to && st.st_uid != *options.shown_to && (st.st_mode & S_IROTH) == 0) {
    return Fail(fmt::format(
        "{}: ignored: owned by uid {} and not readable by others (mode {:04o}), and only the "
        "recording says that uid {} ran the process: not shown to uid {}",
        path, st.st_uid, st.st_mode & 07777, options.user, *options.shown_to));
  }
  return {};
}

std::optional<uid_t> ProcessUid(uint32_t pid, const std::string& proc) {
  auto fd = OpenRegularFile(fmt::format("{}/{}/status", proc, pid));
  // /proc files report size 0: read what there is, a few KiB.
  char buffer[8192];
  const size_t n = fd ? PreadAll(fd->get(), std::as_writable_bytes(std::span(buffer)), 0) : 0;
  std::string_view text(buffer, n);
  const size_t at = text.find("\nUid:");
  if (at == std::string_view::npos) return std::nullopt;
  text.remove_prefix(at + 5);
  text.remove_prefix(std::min(text.find_first_not_of(" \t"), text.size()));
  uid_t uid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), uid);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return uid;
}

std::string BootId() {
  auto fd = OpenRegularFile("/proc/sys/kernel/random/boot_id");
  char buffer[64];
  const size_t n = fd ? PreadAll(fd->get(), std::as_writable_bytes(std::span(buffer)), 0) : 0;
  std::string id(buffer, n);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

Result<PerfMap> PerfMap::Load(const std::string& path, const PerfMapOptions& options) {
  // Anyone may create /tmp/perf-PID.map: a FIFO there would hang the
  // report, a symlink would make us read another file as root. Only a
  // regular file, not through a link, checked on the open file.
  auto opened = OpenRegularFile(path, OpenRegularOptions{.no_follow = true});
  if (!opened) return tl::unexpected(opened.error());
  UniqueFd fd = std::move(*opened);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    return Fail(fmt::format("{}: fstat: {}", path, std::strerror(errno)), errno);
  }
  TRY(CheckPerfMapFile(path, st, options));
  // The size now; a map still growing is read as far as it went.
  std::string text(std::min<uint64_t>(static_cast<uint64_t>(st.st_size), options.max_bytes), '\0');
  text.resize(PreadAll(fd.get(), std::as_writable_bytes(std::span(text)), 0));
  const bool cut = static_cast<uint64_t>(st.st_size) > options.max_bytes;
  if (cut) text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  PerfMap map = Parse(text);
  map.cut_ = cut;
  return map;
}

const PerfMapSymbol* PerfMap::Find(uint64_t addr) const {
  auto next = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                               [](uint64_t a, const PerfMapSymbol& s) { return a < s.start; });
  // Entries starting at or before addr, walked back while one can still
  // reach it; among those containing it the latest written wins.
  const PerfMapSymbol* best = nullptr;
  size_t best_order = 0;
  for (auto i = static_cast<size_t>(next - symbols_.begin()); i > 0 && max_end_[i - 1] > addr;
       --i) {
    const PerfMapSymbol& symbol = symbols_[i - 1];
    if (addr < End(symbol) && (best == nullptr || order_[i - 1] > best_order)) {
      best = &symbol;
      best_order = order_[i - 1];
    }
  }
  return best;
}

}  // namespace sample
