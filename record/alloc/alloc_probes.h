// AllocProbes: what --alloc records. The allocation functions of the
// target's binaries (allocator_functions.h) get uprobes defined in tracefs
// in a group of this recorder's own, and each becomes an event of the
// recording named for the report:
//   alloc:FUNC         the call, its arguments in the raw payload (size,
//                      nmemb, ptr, align, memptr), with the recording's
//                      call chains and the stack pointer; every call, or
//                      every Nth with -c N (-F does not apply);
//                      with a minimum size, only larger requests (a
//                      kernel filter on size; calloc and realloc are
//                      always recorded)
//   alloc:FUNC:return  the pointer it returned (ptr), no call chain, every
//                      call
// free and operator delete have only the first (ptr, every call). The
// report pairs them per thread (report/load/allocations.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "libsample/events/event_spec.h"
#include "libsample/events/uprobe_definitions.h"
#include "libsample/perf/perf_event.h"
#include "libsample/result.h"
#include "record/target/record_target.h"

namespace sample::record {

struct AllocOptions {
  bool enabled = false;   // --alloc
  uint64_t min_size = 0;  // --alloc-min-size: smaller requests are not recorded
  uint64_t every = 1;     // -c: every Nth allocating call (-F does not apply)
};

struct AllocProbes {
  // Removed when this goes: after the events, which the kernel needs
  // closed first.
  std::optional<DefinedUprobes> defined;
  std::vector<EventSpec> specs;
  // Where each allocator was found, for the recorder's notes:
  // "malloc, free, ... in /lib/x86_64-linux-gnu/libc.so.6".
  std::vector<std::string> found_in;
};

// Closes `events` (leaving it empty) and removes `probes`' definitions
// in a child process, so the recorder need not wait: the kernel takes
// about 80 ms to unregister each probe as its last event closes. The
// child holds the events' last references, closes them, removes the
// definitions and exits; the recorder's own closes return at once. If no
// child can be made, both happen here.
void CloseInBackground(AllocProbes& probes, std::vector<PerfEvent>& events);

// Finds the allocation functions of `command` (a command target) or the
// target's processes, defines their probes and parses their events.
// Fails for CPU-wide targets, for targets defining no malloc, and where
// tracefs or its uprobe_events cannot be written (with advice).
Result<AllocProbes> PrepareAllocProbes(const AllocOptions& options, const RecordTarget& target,
                                       const std::vector<std::string>& command,
                                       const EventParseOptions& parse);

}  // namespace sample::record
