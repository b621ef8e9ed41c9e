// The events of a recording, opened on its target: -e's list (cycles by
// default, or cpu-clock where there is no PMU, as perf falls back and says),
// each --filter on the tracepoint before it, --off-cpu's sched_switch,
// with the sampling defaults the options give (-F, -c, call chains, -m,
// -D, --control's tracking event). Notes on stderr (user space only under
// perf_event_paranoid, the ring size chosen) unless quiet.
#pragma once

#include <optional>
#include <vector>

#include "libsample/result.h"
#include "record/events/event_opener.h"
#include "record/target/record_target.h"
#include "record/recorder.h"

namespace sample::record {

// Creates and opens the events into `opener`, `added` (--alloc's) after
// the others; without -e, `added` alone when there are any.
Result<void> OpenRecordingEvents(const RecordOptions& options, const RecordTarget& target,
                                 const std::vector<EventSpec>& added,
                                 std::optional<EventOpener>& opener);

}  // namespace sample::record
