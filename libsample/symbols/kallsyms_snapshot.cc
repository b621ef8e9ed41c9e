#include "libsample/symbols/kallsyms_snapshot.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "libsample/cache_dir.h"
#include "libsample/mapped_file.h"
#include "libsample/unique_fd.h"

namespace sample {
namespace {

// The cache holds the table sorted (SortKallsyms), so that a recording
// bisects the mapped file for its few addresses instead of parsing and
// sorting 120k lines (12 ms of CPU per recording). Version 1 held the
// kernel's text as read, under kOldCachePrefix; its files are removed.
constexpr std::string_view kCacheMagic = "sample-kallsyms-cache v2";
constexpr std::string_view kCachePrefix = "sorted-kallsyms-";
constexpr std::string_view kOldCachePrefix = "kallsyms-";

struct AddressRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool Contains(uint64_t addr) const { return addr >= begin && addr < end; }
};

bool ReadAll(int fd, std::string& out) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buffer, static_cast<size_t>(n));
  }
}

std::optional<uint64_t> ParseHex(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The address of core kernel symbol `name` ("_stext"), from its line.
std::optional<uint64_t> CoreSymbolAddress(std::string_view text, std::string_view name) {
  const std::string needle = fmt::format(" T {}\n", name);
  const size_t at = text.find(needle);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t line_start = text.rfind('\n', at);
  const size_t begin = line_start == std::string_view::npos ? 0 : line_start + 1;
  return ParseHex(text.substr(begin, at - begin));
}

std::optional<AddressRange> CoreTextRange(std::string_view text) {
  auto begin = CoreSymbolAddress(text, "_stext");
  auto end = CoreSymbolAddress(text, "_etext");
  if (!begin || !end || *begin == 0 || *end <= *begin) return std::nullopt;
  return AddressRange{*begin, *end};
}

std::string CacheName(const KallsymsSnapshotOptions& options) {
  return fmt::format("{}{}", kCachePrefix, options.boot_id);
}

// The cache, mapped: its sorted table and the core text range of its first
// line.
struct Cache {
  MappedFile file;
  std::string_view sorted;
  AddressRange core;
};

// The cache, if it exists, is ours, and belongs to this boot: read
// through the checked directory (cache_dir.h), never made here.
std::optional<Cache> MapCache(const KallsymsSnapshotOptions& options) {
  const UniqueFd dir = OpenOwnDirectory(options.cache_dir, {.create = false});
  auto fd = dir.valid() ? OpenCacheFile(dir.get(), CacheName(options))
                        : Result<UniqueFd>(Fail("no cache directory"));
  if (!fd) return std::nullopt;
  auto file = MappedFile::Map(fd->get(), options.cache_dir + "/" + CacheName(options));
  if (!file) return std::nullopt;
  const std::string_view text(reinterpret_cast<const char*>(file->bytes().data()),
                              file->bytes().size());
  // "<magic> <boot_id> <stext> <etext>\n"
  const size_t eol = text.find('\n');
  if (eol == std::string_view::npos) return std::nullopt;
  const std::string_view header = text.substr(0, eol);
  const std::string expected_start = fmt::format("{} {} ", kCacheMagic, options.boot_id);
  if (!header.starts_with(expected_start)) return std::nullopt;
  const std::string_view range = header.substr(expected_start.size());
  const size_t space = range.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto begin = ParseHex(range.substr(0, space));
  auto end = ParseHex(range.substr(space + 1));
  if (!begin || !end || *end <= *begin) return std::nullopt;
  return Cache{std::move(*file), text.substr(eol + 1), AddressRange{*begin, *end}};
}

// Removes caches of earlier boots (each is a few MB and can never match
// again), those of the unsorted format and a killed run's temporaries.
void RemoveOtherCaches(int dir_fd, const KallsymsSnapshotOptions& options) {
  const std::string keep = CacheName(options);
  UniqueFd listing(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* dir = listing.valid() ? fdopendir(listing.get()) : nullptr;
  if (dir == nullptr) return;
  listing.Release();  // closedir closes it
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if ((name.starts_with(kCachePrefix) && name != keep) || name.starts_with(kOldCachePrefix)) {
      unlinkat(dirfd(dir), entry->d_name, 0);
    }
  }
  closedir(dir);
  TrimCacheDirectory(dir_fd, CacheTrimPolicy{.suffix = keep, .keep = keep});
}

// Best effort: a recording never fails because its cache could not be
// written. Through the checked directory, under a temporary name.
void WriteCache(const KallsymsSnapshotOptions& options, std::string_view sorted,
                const AddressRange& core) {
  const UniqueFd dir = OpenOwnDirectory(options.cache_dir);
  if (!dir.valid()) return;
  RemoveOtherCaches(dir.get(), options);
  std::string data =
      fmt::format("{} {} {:x} {:x}\n", kCacheMagic, options.boot_id, core.begin, core.end);
  data.append(sorted);
  (void)WriteCacheFile(dir.get(), CacheName(options), std::as_bytes(std::span(data)));
}

std::string ReadBootId() {
  UniqueFd fd(open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC));
  std::string id;
  if (!fd.valid() || !ReadAll(fd.get(), id)) return {};
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  // It names a file: accept only the uuid alphabet.
  const bool plain = std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
  });
  return plain ? id : std::string();
}

// Why a table whose addresses are all zero is: the kernel shows them to
// CAP_SYSLOG, and with kptr_restrict 0 to anyone while
// perf_event_paranoid is 1 or less (kallsyms_show_value).
std::string HiddenAddressesNote(const KallsymsSnapshotOptions& options) {
  const auto level = [](const char* path) {
    std::ifstream in(path);
    int value = 0;
    return in >> value ? fmt::format("{}", value) : std::string("unknown");
  };
  return fmt::format(
      "{} hides addresses from this user; kernel frames will show as [unknown]. They are "
      "shown to root (CAP_SYSLOG) and, with kernel.kptr_restrict=0 (it is {}), to every user "
      "while kernel.perf_event_paranoid is 1 or less (it is {}).",
      options.kallsyms_path, level("/proc/sys/kernel/kptr_restrict"),
      level("/proc/sys/kernel/perf_event_paranoid"));
}

}  // namespace

KallsymsSnapshotOptions DefaultKallsymsSnapshotOptions() {
  KallsymsSnapshotOptions options;
  options.boot_id = ReadBootId();
  options.cache_dir = UserCacheDir();
  return options;
}

struct KallsymsFeed::State {
  KallsymsSnapshotOptions options;
  bool use_cache = false;
  bool cache_tried = false;
  std::optional<Cache> cache;
  // The sorted table of the last read (SortKallsyms), when there was one.
  std::string table;
  std::optional<std::chrono::steady_clock::time_point> read_at;
  // Why the last read gave no table.
  std::string read_note;

  // Reads the kernel's table, keeps it sorted and refreshes the cache.
  void Read() {
    read_at = std::chrono::steady_clock::now();
    table.clear();
    read_note.clear();
    UniqueFd fd(open(options.kallsyms_path.c_str(), O_RDONLY | O_CLOEXEC));
    std::string text;
    text.reserve(8 << 20);  // one allocation for the whole file (5.4 MB on 6.18)
    if (!fd.valid() || !ReadAll(fd.get(), text)) {
      read_note = fmt::format("cannot read {}; kernel frames will show as [unknown]",
                              options.kallsyms_path);
      return;
    }
    table = SortKallsyms(text);
    if (table.empty()) {
      read_note = HiddenAddressesNote(options);
      return;
    }
    if (use_cache) {
      if (auto core = CoreTextRange(text)) {
        WriteCache(options, table, *core);
        // Mapped at the next Select if there was none before.
        if (!cache) cache_tried = false;
      }
    }
  }
};

KallsymsFeed::KallsymsFeed(KallsymsSnapshotOptions options) : state_(std::make_unique<State>()) {
  state_->use_cache = !options.cache_dir.empty() && !options.boot_id.empty();
  state_->options = std::move(options);
}

KallsymsFeed::~KallsymsFeed() = default;

KallsymsSnapshot KallsymsFeed::Select(const std::vector<uint64_t>& addresses) {
  State& s = *state_;
  KallsymsSnapshot snapshot;
  if (addresses.empty()) return snapshot;
  if (s.use_cache && !s.cache_tried) {
    s.cache = MapCache(s.options);
    s.cache_tried = true;
  }
  if (s.cache) {
    const bool all_core = std::all_of(addresses.begin(), addresses.end(),
                                      [&](uint64_t a) { return s.cache->core.Contains(a); });
    if (all_core) {
      auto symbols = SelectSortedKallsyms(s.cache->sorted, addresses);
      if (symbols && !symbols->empty()) {
        snapshot.symbols = std::move(*symbols);
        snapshot.from_cache = true;
        return snapshot;
      }
    }
  }
  const auto age = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - *s.read_at).count();
  };
  if (!s.read_at || age() > s.options.reread_seconds) s.Read();
  if (s.table.empty()) {
    snapshot.note = s.read_note;
    return snapshot;
  }
  // Lines SortKallsyms wrote always parse.
  snapshot.symbols = SelectSortedKallsyms(s.table, addresses).value_or(std::vector<KernelSymbol>{});
  return snapshot;
}

KallsymsSnapshot TakeKallsymsSnapshot(const std::vector<uint64_t>& addresses,
                                      const KallsymsSnapshotOptions& options) {
  return KallsymsFeed(options).Select(addresses);
}

}  // namespace sample
