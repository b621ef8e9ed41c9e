// LiveLoader (recording_loader.h) over the Loader (loader.h): each Next
// applies the chunks since the last call and names their new locations.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "report/load/loader.h"
#include "report/load/profile_building.h"
#include "report/load/recording_loader.h"

namespace sample::report {

const Recording& Loader::Next() {
  if (!unwinding_) {
    StartReading(/*jobs=*/1);
    stacks_.set_collapse_unknown(true);
    symbol_cache_.emplace(BaseSymbolizeOptions(), reader_.build_ids(),
                          std::string(reader_.kernel_symbols()), options_.kernel_symbol_feed);
  }
  // The last interval's samples go; what they were interned into stays.
  // The chain caches go now and then: an exited process keeps its own
  // until then (every call: the refresh cost 3x as much).
  if (++live_calls_ % kCacheClearCalls == 0) {
    stacks_.ClearChainCaches();
    unwinding_->ClearFramedPcs();
  }
  samples_.clear();
  sample_reads_.clear();
  out_.warnings.clear();
  out_.profile.ClearSamples();
  samples_.reserve(ExpectedRecords(reader_));
  ApplyChunks(/*jobs=*/1);
  out_.stats.unwind = unwinding_->stats();
  SymbolizeNewLocations();
  BuildProfile(live_symbols_, stacks_, std::move(samples_), std::move(sample_reads_),
               group_reads_, out_);
  samples_ = {};
  sample_reads_ = {};
  DescribeRecording(reader_, processes_, toggles_, options_.apply_toggles, out_);
  return out_;
}

void Loader::SymbolizeNewLocations() {
  const std::vector<Location>& locations = stacks_.locations();
  const size_t done = live_symbols_.begin.size();
  if (locations.size() == done) return;
  const std::vector<Location> fresh(locations.begin() + static_cast<ptrdiff_t>(done),
                                    locations.end());
  std::vector<std::string> dso_paths;
  for (size_t i = 0; i < processes_.dso_count(); ++i) {
    dso_paths.push_back(processes_.DsoPath(static_cast<uint32_t>(i)));
  }
  std::vector<uint64_t> uses = LocationUses(samples_, stacks_);
  uses.erase(uses.begin(), uses.begin() + static_cast<ptrdiff_t>(done));
  SymbolizeResult result = symbol_cache_->Symbolize(fresh, dso_paths);
  out_.stats.mismatched_binaries += result.mismatched_binaries;
  out_.stats.missing_binaries += result.missing_binaries;
  for (auto& source : result.symbol_sources) out_.stats.symbol_sources.push_back(std::move(source));
  std::sort(out_.stats.symbol_sources.begin(), out_.stats.symbol_sources.end());
  out_.warnings.insert(out_.warnings.end(), result.warnings.begin(), result.warnings.end());
  result.symbol_sources.clear();
  const LocationFunctions more = InternLocationFunctions(std::move(result), fresh, dso_paths, uses,
                                                         options_.inline_frames, out_);
  AppendLocationFunctions(more, live_symbols_);
  out_.profile.ChooseNames(options_.full_signatures);
}

struct LiveLoader::State {
  State(const format::RecordingFile& source, const LoadOptions& options)
      : options(options), loader(source, this->options) {}
  LoadOptions options;
  Loader loader;
};

LiveLoader::LiveLoader(const format::RecordingFile& source, const LoadOptions& options)
    : state_(std::make_unique<State>(source, options)) {}

LiveLoader::~LiveLoader() = default;

const Recording& LiveLoader::Next() { return state_->loader.Next(); }

size_t LiveLoader::locations() const { return state_->loader.named_locations(); }

}  // namespace sample::report
