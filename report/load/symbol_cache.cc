#include "report/load/symbol_cache.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "libsample/model/process_table.h"
#include "libsample/symbols/kallsyms.h"
#include "libsample/symbols/perf_map.h"
#include "report/load/jit_timeline.h"

namespace sample::report {

SymbolCache::SymbolCache(SymbolizeOptions options, format::Metadata build_ids,
                         std::string kernel_symbols, KernelFeed kernel_feed)
    : options_(std::move(options)),
      build_ids_(std::move(build_ids)),
      kernel_text_(std::move(kernel_symbols)),
      kernel_feed_(std::move(kernel_feed)),
      locator_(options_.binaries, options_.recorded) {}

SymbolSource& SymbolCache::SourceFor(uint32_t dso, const std::string& path,
                                     SymbolizeResult& result) {
  auto it = sources_.find(dso);
  if (it != sources_.end()) return *it->second;
  std::unique_ptr<SymbolSource> source;
  if (!options_.names || dso == ProcessTable::kUnknownDso || IsJitDumpDsoPath(path)) {
    source = std::make_unique<NoSymbolSource>();
  } else {
    source = BinarySymbolSource::Open(
        locator_, path, format::FindMetadata(build_ids_, path).value_or(""), options_.srclines);
  }
  const SourceFacts& facts = source->facts();
  if (!facts.source.empty()) result.symbol_sources.emplace_back(path, facts.source);
  result.warnings.insert(result.warnings.end(), facts.warnings.begin(), facts.warnings.end());
  result.missing_binaries += facts.missing;
  result.mismatched_binaries += facts.mismatched;
  return *sources_.emplace(dso, std::move(source)).first->second;
}

SymbolizeResult SymbolCache::Symbolize(const std::vector<Location>& locations,
                                       const std::vector<std::string>& dso_paths) {
  SymbolizeResult result;
  std::map<uint32_t, std::vector<uint32_t>> by_dso;  // dso -> indexes into locations
  for (uint32_t i = 0; i < locations.size(); ++i) by_dso[locations[i].dso].push_back(i);
  std::vector<std::vector<ResolvedFrame>> per_location(locations.size());
  for (const auto& [dso, ids] : by_dso) {
    std::vector<uint64_t> offsets;
    offsets.reserve(ids.size());
    for (uint32_t id : ids) offsets.push_back(locations[id].offset);
    const std::string& path = dso_paths[dso];
    std::vector<std::vector<ResolvedFrame>> frames;
    if (dso == ProcessTable::kKernelDso && options_.names) {
      if (kernel_feed_) {
        // Each location is named once: the symbols covering this call's
        // (in kallsyms order, each with its successor) name them all.
        std::vector<KernelSymbol> covering = kernel_feed_({offsets.begin(), offsets.end()});
        if (!kernel_reported_) {
          result.symbol_sources.emplace_back(
              path, covering.empty()
                        ? "kallsyms, as addresses come (none covered the first ones: unreadable, "
                          "hidden or outside the table)"
                        : "kallsyms, the symbols covering each address as it comes");
          kernel_reported_ = true;
        }
        KernelSymbolSource selected(std::move(covering), "kallsyms");
        frames = selected.Symbolize(offsets);
      } else {
        if (!kernel_) {
          kernel_.emplace(ParseKallsyms(kernel_text_), options_.kernel_symbols_origin);
          result.symbol_sources.emplace_back(path, kernel_->facts().source);
        }
        frames = kernel_->Symbolize(offsets);
      }
    } else if (dso == ProcessTable::kUnknownDso) {
      // Addresses in no mapping, one location for all (a live view
      // collapses them: UnresolvedStacks::set_collapse_unknown).
      ResolvedFrame unknown;
      unknown.name = "[unknown]";
      unknown.known = false;
      frames.assign(offsets.size(), {unknown});
    } else if (IsPerfMapPath(path) && options_.names) {
      // Read again: the JIT has added to it since. Live, on this boot:
      // only a file of the process's user (as the recorder copies it).
      const uint32_t pid = PerfMapPid(path);
      const auto uid = ProcessUid(pid);
      PerfMapSymbolSource map(
          uid ? PerfMap::Load(options_.binaries.files.symfs + path, PerfMapOptions{.user = *uid})
              : Fail(fmt::format("{}: not read: process {} has ended", path, pid)));
      frames = map.Symbolize(offsets);
    } else {
      frames = SourceFor(dso, path, result).Symbolize(offsets);
    }
    for (size_t i = 0; i < ids.size(); ++i) per_location[ids[i]] = std::move(frames[i]);
  }
  FlattenFrames(per_location, result);
  std::sort(result.symbol_sources.begin(), result.symbol_sources.end());
  return result;
}

}  // namespace sample::report
