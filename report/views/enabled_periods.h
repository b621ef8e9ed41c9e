// EnabledPeriods: when sampling was switched on, from the file's kControl
// switches (-D's delay, --control's enable and disable). Named periods, not
// windows: the report has time windows (--time), toggle windows (on=/off=)
// and the flight recorder's window, none of them this. --header still
// prints each period as a "window" line.
//
// The switches are replayed in time order over the sampling events (every
// event but the sideband's dummy), each on or off; a period is a span in
// which at least one event was on. Sampling is off before the first
// switch; a period still open at the last switch (a recorder that died)
// ends at `end_ns`.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/sample_file_format.h"
#include "libsample/perf/event_table.h"

namespace sample::report {

struct EnabledPeriod {
  uint64_t start_ns = 0;  // the events' clock
  uint64_t end_ns = 0;
  // The events (indexes in the file's event list) that were on at some
  // time in the period; empty when every sampling event was on throughout.
  std::vector<uint32_t> events;
};

struct EnabledPeriods {
  std::vector<EnabledPeriod> periods;
  uint64_t enabled_ns = 0;  // their total length
  uint64_t ignored = 0;     // switches of an event the file does not have
};

EnabledPeriods BuildEnabledPeriods(const std::vector<format::ControlEntry>& switches,
                                   const std::vector<EventDesc>& events, uint64_t end_ns);

}  // namespace sample::report
