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
  const LocationFunctions& symbols = naming_.NameNew(stacks_, samples_, processes_, out_);
  BuildProfile(symbols, stacks_, std::move(samples_), std::move(sample_reads_),
               group_reads_, out_);
  samples_ = {};
  sample_reads_ = {};
  DescribeRecording(reader_, processes_, toggles_, options_.apply_toggles, out_);
  return out_;
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
