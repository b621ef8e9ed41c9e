#include "report/load/symbolization.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "libsample/cache_dir.h"
#include "libsample/model/process_table.h"
#include "libsample/parallel_for.h"
#include "libsample/symbols/kallsyms.h"
#include "libsample/symbols/perf_map.h"
#include "libsample/symbols/recorded_binary.h"
#include "report/load/jit_symbol_source.h"
#include "report/load/jit_timeline.h"
#include "report/load/symbol_sources.h"

namespace sample::report {
namespace {

// Asks `source` once for the frames of `location_ids` (all in its DSO).
void Ask(SymbolSource& source, const std::vector<uint32_t>& location_ids,
         const std::vector<Location>& locations,
         std::vector<std::vector<ResolvedFrame>>& per_location) {
  std::vector<uint64_t> offsets;
  offsets.reserve(location_ids.size());
  for (uint32_t id : location_ids) offsets.push_back(locations[id].offset);
  std::vector<std::vector<ResolvedFrame>> frames = source.Symbolize(offsets);
  for (size_t i = 0; i < location_ids.size(); ++i) {
    per_location[location_ids[i]] = std::move(frames[i]);
  }
}

// One progress line for debuginfod downloads, shared by the worker threads.
class ProgressLine {
 public:
  void Show(const DebuginfodProgress& p) {
    std::lock_guard lock(mutex_);
    if (p.bytes_total > 0) {
      fmt::print(stderr, "\rdebuginfod: {} {} {} / {} KiB\033[K", p.kind, p.build_id,
                 p.bytes_done / 1024, p.bytes_total / 1024);
    } else {
      fmt::print(stderr, "\rdebuginfod: {} {} ({} ms)\033[K", p.kind, p.build_id,
                 p.elapsed.count());
    }
    shown_ = true;
  }
  ~ProgressLine() {
    if (shown_) fmt::print(stderr, "\r\033[K");
  }

 private:
  std::mutex mutex_;
  bool shown_ = false;
};

}  // namespace

void FlattenFrames(std::vector<std::vector<ResolvedFrame>>& per_location, SymbolizeResult& result) {
  result.frames_begin.resize(per_location.size());
  result.frames_count.resize(per_location.size());
  for (size_t i = 0; i < per_location.size(); ++i) {
    result.frames_begin[i] = static_cast<uint32_t>(result.frames.size());
    result.frames_count[i] = static_cast<uint32_t>(per_location[i].size());
    for (ResolvedFrame& f : per_location[i]) result.frames.push_back(std::move(f));
  }
}

std::string PerfMapPath(uint32_t pid) { return fmt::format("/tmp/perf-{}.map", pid); }

bool IsPerfMapPath(const std::string& path) {
  return path.starts_with("/tmp/perf-") && path.ends_with(".map");
}

uint32_t PerfMapPid(std::string_view path) {
  constexpr std::string_view kPrefix = "/tmp/perf-", kSuffix = ".map";
  uint32_t pid = 0;
  if (path.size() > kPrefix.size() + kSuffix.size()) {
    std::from_chars(path.data() + kPrefix.size(), path.data() + path.size() - kSuffix.size(), pid);
  }
  return pid;
}

Result<PerfMapOptions> PerfMapFallback(uint32_t pid, const format::Metadata& facts) {
  const std::string path = PerfMapPath(pid);
  const auto boot = format::FindMetadata(facts, "boot_id");
  if (!boot) return PerfMapOptions{.user = geteuid()};
  if (*boot != BootId()) {
    return Fail(
        fmt::format("{}: not read: the recording was made on another boot ({}), when pid "
                    "{} may have been another process than it is now",
                    path, *boot, pid));
  }
  const auto uid_text = format::FindMetadata(facts, fmt::format("jit_uid {}", pid));
  uid_t uid = 0;
  if (!uid_text || std::from_chars(uid_text->data(), uid_text->data() + uid_text->size(), uid).ec !=
                       std::errc()) {
    return Fail(
        fmt::format("{}: not read: the recording does not say whose process {} was", path, pid));
  }
  // The uid is the recording's word, which a crafted file may give
  // (`jit_uid 123 = 0`): the map is read only if the reporting user could
  // read it anyway.
  return PerfMapOptions{.user = uid, .shown_to = geteuid()};
}

namespace {

// The symbols sources' answers, gathered in the order they are asked.
class Gathered {
 public:
  explicit Gathered(size_t locations) : per_location_(locations) {}

  std::vector<std::vector<ResolvedFrame>>& per_location() { return per_location_; }

  void Note(const std::string& path, const SourceFacts& facts) {
    if (!facts.source.empty()) result_.symbol_sources.emplace_back(path, facts.source);
    result_.warnings.insert(result_.warnings.end(), facts.warnings.begin(), facts.warnings.end());
    if (facts.mismatched) ++result_.mismatched_binaries;
    if (facts.missing) ++result_.missing_binaries;
  }

  SymbolizeResult Finish() && {
    std::sort(result_.symbol_sources.begin(), result_.symbol_sources.end());
    FlattenFrames(per_location_, result_);
    return std::move(result_);
  }

 private:
  std::vector<std::vector<ResolvedFrame>> per_location_;
  SymbolizeResult result_;
};

// The names of the JIT pseudo-DSO `path`: the recording's copy of the
// process's perf map, else the file (under --symfs).
// The recorded perf maps by pseudo-DSO path (the first for a pid, if a
// crafted file holds several), so each DSO is one lookup.
std::unordered_map<std::string, const RecordedPerfMap*> RecordedMaps(
    std::span<const RecordedPerfMap> maps) {
  std::unordered_map<std::string, const RecordedPerfMap*> out;
  for (const RecordedPerfMap& map : maps) out.try_emplace(PerfMapPath(map.pid), &map);
  return out;
}

PerfMapSymbolSource PerfMapSourceOf(
    const std::string& path, const SymbolizeOptions& options,
    const std::unordered_map<std::string, const RecordedPerfMap*>& recorded) {
  if (auto it = recorded.find(path); it != recorded.end()) {
    return PerfMapSymbolSource(PerfMap::Parse(it->second->text), "embedded perf map");
  }
  // None copied (--no-embed, an older recorder): this host's file, if it
  // can be the process's.
  static const format::Metadata kNoFacts;
  auto rule = PerfMapFallback(
      PerfMapPid(path), options.recording_facts != nullptr ? *options.recording_facts : kNoFacts);
  if (!rule) return PerfMapSymbolSource(tl::unexpected(rule.error()));
  return PerfMapSymbolSource(PerfMap::Load(options.binaries.files.symfs + path, *rule));
}

// Binaries on `jobs` threads, biggest first so one large library does not
// finish last; each thread has its own locator (and with it its own files).
void SymbolizeBinaries(const std::map<uint32_t, std::vector<uint32_t>>& binaries,
                       const std::vector<Location>& locations,
                       const std::vector<std::string>& dso_paths, const format::Metadata& build_ids,
                       const SymbolizeOptions& options, const LocatorUse& use,
                       Gathered& gathered) {
  std::vector<std::pair<uint32_t, const std::vector<uint32_t>*>> work;
  for (const auto& [dso, ids] : binaries) work.emplace_back(dso, &ids);
  std::stable_sort(work.begin(), work.end(), [](const auto& a, const auto& b) {
    return a.second->size() > b.second->size();
  });
  std::vector<SourceFacts> facts(work.size());
  const size_t threads = ParallelThreads(work.size(), options.jobs);
  std::vector<std::unique_ptr<BinaryLocator>> locators(threads);
  ParallelFor(work.size(), threads, [&](size_t worker, size_t i) {
    if (!locators[worker]) {
      locators[worker] = std::make_unique<BinaryLocator>(options.binaries, options.recorded, use);
    }
    const std::string& path = dso_paths[work[i].first];
    auto source = BinarySymbolSource::Open(*locators[worker], path,
                                           format::FindMetadata(build_ids, path).value_or(""),
                                           options.srclines);
    Ask(*source, *work[i].second, locations, gathered.per_location());
    facts[i] = source->facts();
  });
  for (size_t i = 0; i < work.size(); ++i) gathered.Note(dso_paths[work[i].first], facts[i]);
}

// The kernel's locations, named from only the kallsyms lines covering them:
// a perf.data file's kallsyms is perf's cached copy of the host's whole 5.4
// MB table, parsed in full for a few thousand addresses otherwise; and
// from what `options.kernel_feed` gives for them. Returns the source's facts
// (its symbol count: those covering the samples).
SourceFacts SymbolizeKernel(std::string_view kallsyms, const std::vector<uint32_t>& ids,
                            const std::vector<Location>& locations, const SymbolizeOptions& options,
                            Gathered& gathered) {
  std::vector<uint64_t> addresses;
  addresses.reserve(ids.size());
  for (const uint32_t id : ids) addresses.push_back(locations[id].offset);
  std::vector<KernelSymbol> covering = SelectKallsyms(kallsyms, addresses);
  // Whether some table was at hand: the file's text, or the feed's (which
  // says why when it has none: unreadable, addresses hidden).
  bool held = !kallsyms.empty();
  std::string why_none;
  if (options.kernel_feed) {
    KallsymsSnapshot more = options.kernel_feed(addresses);
    held = held || more.note.empty();
    why_none = std::move(more.note);
    if (covering.empty()) {
      covering = std::move(more.symbols);
    } else if (!more.symbols.empty()) {  // two tables: in address order, as one
      covering.insert(covering.end(), more.symbols.begin(), more.symbols.end());
      std::stable_sort(
          covering.begin(), covering.end(),
          [](const KernelSymbol& a, const KernelSymbol& b) { return a.addr < b.addr; });
    }
  }
  const bool none_covers = covering.empty() && held;
  const bool none_read = covering.empty() && !held && !why_none.empty();
  const std::string& origin = options.kernel_symbols_origin;
  KernelSymbolSource kernel(std::move(covering), origin);
  Ask(kernel, ids, locations, gathered.per_location());
  SourceFacts facts = kernel.facts();
  // Symbols held, none of them for these addresses: not "no symbols".
  if (none_covers) facts.source = origin + " (none covers a sampled address)";
  if (none_read) facts.source = "none: " + why_none;
  return facts;
}

}  // namespace

SymbolizeResult SymbolizeLocations(const std::vector<Location>& locations,
                                   const std::vector<std::string>& dso_paths,
                                   const format::Metadata& build_ids,
                                   std::string_view kernel_symbols,
                                   const SymbolizeOptions& options) {
  Gathered gathered(locations.size());
  std::map<uint32_t, std::vector<uint32_t>> by_dso;  // dso -> location ids
  for (uint32_t i = 0; i < locations.size(); ++i) by_dso[locations[i].dso].push_back(i);
  if (!options.names) {
    NoSymbolSource none;
    for (const auto& [dso, ids] : by_dso) Ask(none, ids, locations, gathered.per_location());
    return std::move(gathered).Finish();
  }

  std::map<uint32_t, std::vector<uint32_t>> binaries;
  std::map<uint32_t, std::vector<uint32_t>> perf_maps;
  std::map<uint32_t, std::vector<uint32_t>> jit_dumps;
  std::map<uint32_t, std::vector<uint32_t>> vdsos;
  for (auto& [dso, ids] : by_dso) {
    if (dso == ProcessTable::kKernelDso) {
      gathered.Note(dso_paths[dso],
                    SymbolizeKernel(kernel_symbols, ids, locations, options, gathered));
    } else if (dso == ProcessTable::kUnknownDso) {
      NoSymbolSource none;
      Ask(none, ids, locations, gathered.per_location());
    } else if (IsJitDumpDsoPath(dso_paths[dso])) {
      jit_dumps[dso] = std::move(ids);
    } else if (IsPerfMapPath(dso_paths[dso])) {
      perf_maps[dso] = std::move(ids);
    } else if (dso_paths[dso] == kVdsoPath) {
      vdsos[dso] = std::move(ids);
    } else {
      binaries[dso] = std::move(ids);
    }
  }
  // JIT code: the process's own map of names (perf's convention), as the
  // recording holds it, else the file.
  const auto recorded_maps = RecordedMaps(options.perf_maps);
  for (const auto& [dso, ids] : perf_maps) {
    PerfMapSymbolSource map = PerfMapSourceOf(dso_paths[dso], options, recorded_maps);
    Ask(map, ids, locations, gathered.per_location());
    gathered.Note(dso_paths[dso], map.facts());
  }

  // JIT code a jitdump named: the code loads of the recording's copy.
  for (const auto& [dso, ids] : jit_dumps) {
    const JitCode* code = nullptr;
    if (options.jit_code != nullptr) {
      if (auto it = options.jit_code->find(dso_paths[dso]); it != options.jit_code->end()) {
        code = it->second.get();
      }
    }
    static const JitCode kNoCode;
    JitDumpSymbolSource source(code ? *code : kNoCode, "embedded jitdump", options.srclines);
    Ask(source, ids, locations, gathered.per_location());
    gathered.Note(dso_paths[dso], source.facts());
  }

  ProgressLine progress;
  LocatorUse use;
  if (options.show_progress) {
    use.progress = [&progress](const DebuginfodProgress& p) { progress.Show(p); };
  }
  // The [vdso]: the image the recording stores, on this thread.
  for (const auto& [dso, ids] : vdsos) {
    BinaryLocator locator(options.binaries, options.recorded, use);
    const std::string& path = dso_paths[dso];
    auto vdso = BinarySymbolSource::Open(
        locator, path, format::FindMetadata(build_ids, path).value_or(""), options.srclines);
    Ask(*vdso, ids, locations, gathered.per_location());
    gathered.Note(path, vdso->facts());
  }
  SymbolizeBinaries(binaries, locations, dso_paths, build_ids, options, use, gathered);
  SymbolizeResult result = std::move(gathered).Finish();
  // A cache refused (root with a user's HOME: the inflated debug files,
  // the annotate index) costs time on every run; say why once.
  const std::string cache = UserCacheDir();
  if (const std::string refused = CacheRefusal(cache); !refused.empty()) {
    result.warnings.push_back(fmt::format("{} cache not used: {}", cache, refused));
  }
  return result;
}

}  // namespace sample::report
