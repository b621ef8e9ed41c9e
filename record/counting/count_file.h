// The counting mode's file (sample-record --stat -o FILE): the events as
// they were opened, the host facts, and one kCounts chunk with each event's
// totals and its -I intervals, so that sample-report --header and --stats
// show them later. Owns nothing past the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/chunk_codec.h"
#include "libsample/events/event_spec.h"
#include "libsample/result.h"
#include "record/counting/count_table.h"

namespace sample::record {

// The totals of every event at the end of one -I interval.
struct CountedInterval {
  uint64_t time_ns = 0;  // since the counting started
  std::vector<CountedEvent> totals;
};

// The kCounts contents for `specs` (their counting attrs, see
// CountingAttr), `totals` and `intervals` in the specs' order.
format::Counts MakeCounts(const std::vector<EventSpec>& specs,
                          const std::vector<CountedEvent>& totals,
                          const std::vector<CountedInterval>& intervals, uint64_t elapsed_ns,
                          bool on_exec, bool inherit);

// Writes the file (an existing one is moved to FILE.old first).
Result<void> WriteCountsFile(const std::string& path, const std::vector<EventSpec>& specs,
                             const format::Counts& counts,
                             const std::vector<std::string>& invocation, uint64_t start_ns);

}  // namespace sample::record
