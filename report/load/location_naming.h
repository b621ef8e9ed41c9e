// LocationNaming: the loader's symbolization stage. It turns the distinct
// code locations UnresolvedStacks collected into Profile functions, and
// owns what naming keeps: for a batch load nothing between calls (NameAll
// symbolizes every location once, spread over threads, and lets go of the
// binaries), for a live view (sample-top) the open symbol sources
// (SymbolCache) and the functions of every location named so far
// (NameNew names only the locations added since the call before).
// Both start from the same options: the user's (--symfs, debuginfod,
// lines, names) and the recording's own code, given once.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "formats/recording_file.h"
#include "libsample/model/process_table.h"
#include "libsample/symbols/recorded_binary.h"
#include "report/load/profile_building.h"
#include "report/load/recording.h"
#include "report/load/recording_loader.h"
#include "report/load/symbol_cache.h"
#include "report/load/symbolization.h"
#include "report/load/unresolved_stacks.h"

namespace sample::report {

class LocationNaming {
 public:
  // `reader`, `options` and the code `recorded` points into outlive this.
  LocationNaming(const format::RecordingFile& reader, const LoadOptions& options,
                 RecordedCode recorded);

  // Every location of `stacks` on `jobs` threads; `samples` weigh the
  // unknown frames counted in out.stats. Says in `out` what it read
  // (symbol sources, mismatched and missing binaries, warnings).
  LocationFunctions NameAll(const UnresolvedStacks& stacks,
                            const std::vector<ProfileSample>& samples,
                            const ProcessTable& processes, unsigned jobs, Recording& out);

  // Live: the locations of `stacks` after those named by earlier calls,
  // on this thread, with the sources kept from call to call; returns the
  // functions of every location named so far. Rechooses out.profile's
  // names when there were new ones.
  const LocationFunctions& NameNew(const UnresolvedStacks& stacks,
                                   const std::vector<ProfileSample>& samples,
                                   const ProcessTable& processes, Recording& out);

  // Locations NameNew has named.
  size_t named() const { return named_.begin.size(); }

 private:
  SymbolizeOptions BaseOptions() const;

  const format::RecordingFile& reader_;
  const LoadOptions& options_;
  const RecordedCode recorded_;
  // Live only: the sources kept open and the functions named so far.
  std::optional<SymbolCache> cache_;
  LocationFunctions named_;
};

}  // namespace sample::report
