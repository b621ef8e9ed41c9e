#include "report/symbolization.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "libsample/model/process_table.h"
#include "libsample/symbols/binary_symbolizer.h"
#include "libsample/symbols/kallsyms.h"
#include "libsample/symbols/perf_map.h"
#include "libsample/symbols/recorded_binary.h"

namespace sample::report {
namespace {

ResolvedFrame UnknownFrame(uint64_t offset) {
  ResolvedFrame f;
  f.name = fmt::format("[unknown] {:#x}", offset);
  f.known = false;
  return f;
}

std::string SourceLine(const SymbolFrame& frame) {
  if (frame.file.empty() || frame.line == 0) return {};
  const size_t slash = frame.file.rfind('/');
  return fmt::format(
      "{}:{}", slash == std::string::npos ? frame.file : frame.file.substr(slash + 1), frame.line);
}

// True for "/tmp/perf-PID.map" pseudo-DSOs.
bool IsPerfMapPath(const std::string& path) {
  return path.starts_with("/tmp/perf-") && path.ends_with(".map");
}

// Fills the frames of each of `location_ids` (file offsets in the binary)
// from `symbolizer`; every location gets an [unknown] frame when it is
// nullptr or knows nothing of the offset.
void ResolveLocations(BinarySymbolizer* symbolizer, const std::vector<uint32_t>& location_ids,
                      const std::vector<Location>& locations, bool srclines,
                      std::vector<std::vector<ResolvedFrame>>& per_location) {
  for (uint32_t id : location_ids) {
    std::vector<ResolvedFrame>& out = per_location[id];
    const uint64_t offset = locations[id].offset;
    const std::vector<SymbolFrame> frames =
        symbolizer ? symbolizer->SymbolizeFileOffset(offset) : std::vector<SymbolFrame>();
    for (const SymbolFrame& frame : frames) {
      if (frame.function.empty()) continue;
      ResolvedFrame r;
      r.name = frame.function;
      r.inlined = frame.inlined;
      if (srclines) r.srcline = SourceLine(frame);
      out.push_back(std::move(r));
    }
    if (out.empty()) {
      out.push_back(UnknownFrame(offset));
      // A line without a function (rare) still helps --sort srcline.
      if (srclines && !frames.empty()) out.back().srcline = SourceLine(frames.front());
      continue;
    }
    // The outer function as its ELF symbol names it, when one covers the
    // address (perf's names: DWARF may know a glibc function by an
    // internal alias such as __GI___clock_gettime), and the offset in it.
    const ElfSymbols& elf = symbolizer->elf_symbols();
    if (auto vaddr = elf.FileOffsetToVaddr(offset)) {
      if (const ElfSymbol* symbol = elf.Find(*vaddr)) {
        out.back().symbol_offset = *vaddr - symbol->start;
        if (!out.back().inlined && out.back().known) out.back().name = symbol->name;
      }
    }
  }
}

class BinaryWork {
 public:
  BinaryWork(const std::vector<Location>& locations, const std::vector<std::string>& dso_paths,
             const format::Metadata& build_ids, const SymbolizeOptions& options,
             std::vector<std::vector<ResolvedFrame>>& per_location)
      : locations_(locations),
        dso_paths_(dso_paths),
        build_ids_(build_ids),
        options_(options),
        per_location_(per_location) {}

  // Locates the binary of `dso` with `locator`, then fills the frames of
  // its locations.
  LocatedBinary Run(BinaryLocator& locator, uint32_t dso,
                    const std::vector<uint32_t>& location_ids) const {
    const std::string& path = dso_paths_[dso];
    const auto recorded = format::FindMetadata(build_ids_, path);
    LocatedBinary located = locator.Locate(path, recorded.value_or(""));
    std::optional<BinarySymbolizer> symbolizer;
    if (!located.binary.empty()) {
      auto opened = BinarySymbolizer::Open(located.binary, located.debug);
      if (opened) {
        symbolizer = std::move(*opened);
        located.NoteOpened(!symbolizer->dwarf_path().empty());
      } else {
        located.NoteUnreadable(opened.error().message);
      }
    }
    ResolveLocations(symbolizer ? &*symbolizer : nullptr, location_ids, locations_,
                     options_.srclines, per_location_);
    return located;
  }

 private:
  const std::vector<Location>& locations_;
  const std::vector<std::string>& dso_paths_;
  const format::Metadata& build_ids_;
  const SymbolizeOptions& options_;
  std::vector<std::vector<ResolvedFrame>>& per_location_;
};

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

std::string PerfMapPath(uint32_t pid) { return fmt::format("/tmp/perf-{}.map", pid); }

SymbolizeResult SymbolizeLocations(const std::vector<Location>& locations,
                                   const std::vector<std::string>& dso_paths,
                                   const format::Metadata& build_ids,
                                   const std::string& kernel_symbols,
                                   const SymbolizeOptions& options) {
  std::vector<std::vector<ResolvedFrame>> per_location(locations.size());
  std::map<uint32_t, std::vector<uint32_t>> binaries;  // dso -> location ids
  std::map<uint32_t, std::vector<uint32_t>> perf_maps;
  std::map<uint32_t, std::vector<uint32_t>> vdsos;
  const std::vector<KernelSymbol> kernel =
      options.names ? ParseKallsyms(kernel_symbols) : std::vector<KernelSymbol>{};
  bool any_kernel = false;
  for (uint32_t i = 0; i < locations.size(); ++i) {
    const Location& loc = locations[i];
    if (!options.names) {
      per_location[i].push_back(UnknownFrame(loc.offset));
    } else if (loc.dso == ProcessTable::kKernelDso) {
      any_kernel = true;
      if (const KernelSymbol* ks = FindKernelSymbol(kernel, loc.offset)) {
        ResolvedFrame f;
        f.name = ks->name;
        f.symbol_offset = loc.offset - ks->addr;
        per_location[i].push_back(std::move(f));
      } else {
        per_location[i].push_back(UnknownFrame(loc.offset));
      }
    } else if (loc.dso == ProcessTable::kUnknownDso) {
      per_location[i].push_back(UnknownFrame(loc.offset));
    } else if (IsPerfMapPath(dso_paths[loc.dso])) {
      perf_maps[loc.dso].push_back(i);
    } else if (dso_paths[loc.dso] == kVdsoPath) {
      vdsos[loc.dso].push_back(i);
    } else {
      binaries[loc.dso].push_back(i);
    }
  }

  SymbolizeResult result;
  if (any_kernel) {
    result.symbol_sources.emplace_back(
        dso_paths[ProcessTable::kKernelDso],
        kernel.empty() ? "none: the recording holds no kernel symbols"
                       : fmt::format("recorded kallsyms ({} symbols)", kernel.size()));
  }
  // JIT code: the process's own map of names (perf's convention).
  for (const auto& [dso, ids] : perf_maps) {
    const std::string path = options.symfs + dso_paths[dso];
    auto map = PerfMap::Load(path, PerfMapOptions{geteuid(), false});
    if (!map) {
      result.warnings.push_back(map.error().message);
      result.symbol_sources.emplace_back(dso_paths[dso], "none: " + map.error().message);
    } else {
      result.symbol_sources.emplace_back(dso_paths[dso], "perf map");
    }
    for (uint32_t id : ids) {
      const PerfMapSymbol* symbol = map ? map->Find(locations[id].offset) : nullptr;
      if (symbol == nullptr) {
        per_location[id].push_back(UnknownFrame(locations[id].offset));
        continue;
      }
      ResolvedFrame f;
      f.name = symbol->name;
      f.symbol_offset = locations[id].offset - symbol->start;
      per_location[id].push_back(std::move(f));
    }
  }

  const BinaryWork binary_work(locations, dso_paths, build_ids, options, per_location);
  ProgressLine progress;
  BinaryLocatorOptions locator_options;
  locator_options.symfs = options.symfs;
  locator_options.force = options.force;
  locator_options.use_debuginfod = options.use_debuginfod;
  locator_options.vdso_image = options.vdso_image;
  if (options.show_progress) {
    locator_options.debuginfod_progress = [&progress](const DebuginfodProgress& p) {
      progress.Show(p);
    };
  }
  // The [vdso]: the image the recording stores, on this thread.
  for (const auto& [dso, ids] : vdsos) {
    BinaryLocator locator(locator_options);
    const LocatedBinary o = binary_work.Run(locator, dso, ids);
    result.symbol_sources.emplace_back(o.path, o.source);
    result.warnings.insert(result.warnings.end(), o.warnings.begin(), o.warnings.end());
    if (o.mismatched) ++result.mismatched_binaries;
  }

  // Binaries, biggest first so one large library does not finish last.
  std::vector<std::pair<uint32_t, const std::vector<uint32_t>*>> work;
  for (const auto& [dso, ids] : binaries) work.emplace_back(dso, &ids);
  std::stable_sort(work.begin(), work.end(), [](const auto& a, const auto& b) {
    return a.second->size() > b.second->size();
  });
  std::vector<LocatedBinary> outcomes(work.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    BinaryLocator locator(locator_options);
    for (size_t i = next++; i < work.size(); i = next++) {
      outcomes[i] = binary_work.Run(locator, work[i].first, *work[i].second);
    }
  };
  const size_t threads = std::min<size_t>(std::max(1u, options.jobs), work.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  for (size_t i = 0; i < work.size(); ++i) {
    const LocatedBinary& o = outcomes[i];
    result.symbol_sources.emplace_back(dso_paths[work[i].first], o.source);
    result.warnings.insert(result.warnings.end(), o.warnings.begin(), o.warnings.end());
    if (o.mismatched) ++result.mismatched_binaries;
    if (o.missing) ++result.missing_binaries;
  }
  std::sort(result.symbol_sources.begin(), result.symbol_sources.end());

  result.frames_begin.resize(locations.size());
  result.frames_count.resize(locations.size());
  for (size_t i = 0; i < locations.size(); ++i) {
    result.frames_begin[i] = static_cast<uint32_t>(result.frames.size());
    result.frames_count[i] = static_cast<uint32_t>(per_location[i].size());
    for (ResolvedFrame& f : per_location[i]) result.frames.push_back(std::move(f));
  }
  return result;
}

}  // namespace sample::report
