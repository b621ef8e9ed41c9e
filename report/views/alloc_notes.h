// What the '#' lines above an --alloc pseudo-event's table say
// (report/load/alloc_events.h): how many bytes in how many blocks, and
// what makes the figures less than exact (lost records, -c N, a minimum
// size, frees of blocks the recording never saw allocated).
#pragma once

#include <string>
#include <vector>

#include "report/load/recording.h"
#include "report/views/event_sections.h"

namespace sample::report {

// Empty for sections of other events. The first line replaces the
// "Event count" line; the others are notes and warnings, each without
// its "# ".
std::vector<std::string> AllocSectionLines(const EventSection& section, const Recording& recording);

}  // namespace sample::report
