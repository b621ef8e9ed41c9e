#include "report/load/location_naming.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "libsample/symbols/kallsyms_snapshot.h"

namespace sample::report {
namespace {

// What every symbolization says back, into the recording's stats and
// warnings.
void Tally(SymbolizeResult& result, Recording& out) {
  out.stats.mismatched_binaries += result.mismatched_binaries;
  out.stats.missing_binaries += result.missing_binaries;
  out.warnings.insert(out.warnings.end(), result.warnings.begin(), result.warnings.end());
}

}  // namespace

LocationNaming::LocationNaming(const format::RecordingFile& reader, const LoadOptions& options,
                               RecordedCode recorded)
    : reader_(reader), options_(options), recorded_(recorded) {}

SymbolizeOptions LocationNaming::BaseOptions() const {
  SymbolizeOptions options;
  options.binaries = options_.binaries;
  options.recorded = recorded_;
  options.srclines = options_.srclines;
  options.names = options_.symbolize;
  return options;
}

LocationFunctions LocationNaming::NameAll(const UnresolvedStacks& stacks,
                                          const std::vector<ProfileSample>& samples,
                                          const ProcessTable& processes, unsigned jobs,
                                          Recording& out) {
  const std::vector<Location>& locations = stacks.locations();
  const std::vector<uint64_t> uses = LocationUses(samples, stacks);
  const std::vector<std::string>& dso_paths = processes.dso_paths();
  SymbolizeOptions options = BaseOptions();
  options.jobs = jobs;
  options.perf_maps = reader_.perf_maps();
  options.recording_facts = &reader_.metadata();
  options.jit_code = &out.jit_code;
  options.show_progress = options_.show_progress;
  if (reader_.format_name() != "sample.data") {
    options.kernel_symbols_origin = "kallsyms";
  } else if (!reader_.host_kallsyms().empty()) {
    options.kernel_symbols_origin =
        fmt::format("{} of this boot (the file was not closed)", reader_.host_kallsyms());
  }
  // A perf.data recorded on the running kernel: this host's table, read
  // for the sampled addresses (the per-boot sorted cache the recorder
  // keeps, when they are all in the core kernel's text), not whole.
  std::optional<KallsymsFeed> host_kallsyms;
  if (!reader_.host_kallsyms().empty()) {
    KallsymsSnapshotOptions kallsyms = DefaultKallsymsSnapshotOptions();
    if (reader_.host_kallsyms() != kallsyms.kallsyms_path) kallsyms.cache_dir.clear();
    kallsyms.kallsyms_path = reader_.host_kallsyms();
    host_kallsyms.emplace(std::move(kallsyms));
    // (Called within SymbolizeLocations below, on this thread.)
    options.kernel_feed = [&out, &host_kallsyms](const std::vector<uint64_t>& addresses) {
      KallsymsSnapshot snapshot = host_kallsyms->Select(addresses);
      if (!snapshot.note.empty()) out.warnings.push_back(snapshot.note);
      return snapshot;
    };
  }
  SymbolizeResult result = SymbolizeLocations(locations, dso_paths, reader_.build_ids(),
                                              reader_.kernel_symbols(), options);
  Tally(result, out);
  out.stats.symbol_sources = std::move(result.symbol_sources);
  return InternLocationFunctions(std::move(result), locations, dso_paths, uses,
                                 options_.inline_frames, out);
}

const LocationFunctions& LocationNaming::NameNew(const UnresolvedStacks& stacks,
                                                 const std::vector<ProfileSample>& samples,
                                                 const ProcessTable& processes, Recording& out) {
  if (!cache_) {
    cache_.emplace(BaseOptions(), reader_.build_ids(), std::string(reader_.kernel_symbols()),
                   options_.kernel_symbol_feed);
  }
  const std::vector<Location>& locations = stacks.locations();
  const size_t done = named();
  if (locations.size() == done) return named_;
  const std::vector<Location> fresh(locations.begin() + static_cast<ptrdiff_t>(done),
                                    locations.end());
  const std::vector<std::string>& dso_paths = processes.dso_paths();
  std::vector<uint64_t> uses = LocationUses(samples, stacks);
  uses.erase(uses.begin(), uses.begin() + static_cast<ptrdiff_t>(done));
  SymbolizeResult result = cache_->Symbolize(fresh, dso_paths);
  Tally(result, out);
  for (auto& source : result.symbol_sources) out.stats.symbol_sources.push_back(std::move(source));
  std::sort(out.stats.symbol_sources.begin(), out.stats.symbol_sources.end());
  result.symbol_sources.clear();
  const LocationFunctions more = InternLocationFunctions(std::move(result), fresh, dso_paths, uses,
                                                         options_.inline_frames, out);
  AppendLocationFunctions(more, named_);
  out.profile.ChooseNames(options_.full_signatures);
  return named_;
}

}  // namespace sample::report
