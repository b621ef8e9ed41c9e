// BuildEventAttrs: the recording's attr policy, a pure function. From the
// parsed events, the recording's defaults, the target and what the host
// allows (HostLimits, read once by ReadHostLimits), it decides every
// perf_event_attr to open: sampling by period or frequency, the sample
// layout (call chains, user stacks, PERF_SAMPLE_RAW for tracepoints, the
// CPU and identifier fields), which event tracks the sideband (the first,
// or a dummy added for it), inherit and enable-on-exec, the ring size and
// the wakeup watermark. Nothing is opened and no system state is read:
// EventOpener opens what it gives, and tests reach every decision here.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "libsample/events/event_spec.h"
#include "libsample/perf/chain_capture.h"
#include "libsample/perf/perf_record.h"
#include "libsample/perf/user_regs.h"
#include "libsample/result.h"
#include "record/target/record_target.h"

namespace sample::record {

// Samples per second of events that -c, -F and their terms leave alone.
constexpr uint64_t kDefaultFrequency = 4000;

// -d: each sample's data address (PERF_SAMPLE_ADDR: a page fault's
// faulting address, a breakpoint's watched one, a memory event's load or
// store), with the mappings of data as well as code in the sideband
// (attr.mmap_data), so the report can say which mapping and variable it
// was in; --phys-data and --data-page-size add the physical address and the
// size of the page holding it, as perf's options of those names.
struct DataAddresses {
  bool addresses = false;
  bool physical = false;
  bool page_size = false;
};

// Recording-wide settings every event gets unless its own terms say
// otherwise. Without -c or -F, events that count occurrences
// (EventSpec::every_hit) sample every hit and the others kDefaultFrequency
// times a second.
struct SamplingDefaults {
  uint64_t frequency = 0;             // -F; 0: not given
  uint64_t period = 0;                // non-zero: fixed period instead of frequency
  ChainCaptureOptions chain_capture;  // -g / --call-graph
  uint32_t max_stack = 0;             // --max-stack; 0: kernel.perf_event_max_stack
  Arch arch = HostArch();             // whose user registers dwarf and fp,leaf ask for
  // -D: sampling events are turned on later (EnableAll), not at exec; a
  // dummy event tracks the sideband meanwhile.
  bool delayed = false;
  // --control: sampling events are switched on and off while recording,
  // so the sideband is the dummy's too (it must not stop with them).
  bool separate_tracking = false;
  bool switch_events = false;
  size_t mmap_pages = 0;  // -m; 0: not given (ChooseRingPages)
  DataAddresses data;     // -d, --phys-data, --data-page-size
};

// What the host allows, as the attr policy needs it.
struct HostLimits {
  size_t page_size = 4096;
  size_t online_cpus = 1;  // the rings of a target without a CPU list
  uint64_t memory_bytes = 0;
  bool may_lock_more = false;  // CAP_IPC_LOCK: rings beyond RLIMIT_MEMLOCK
  // kernel.perf_event_max_stack: the depth of chains without --max-stack.
  int max_stack = 127;
};

// Reads the page size, CPUs, memory, CAP_IPC_LOCK and the stack limit.
HostLimits ReadHostLimits();

// Whether `spec` is opened once per CPU for every process instead of on
// the target's threads: uprobes of a target that follows new threads (the
// kernel cannot inherit them, see event_attrs.cc).
bool OpenedOnEveryCpu(const EventSpec& spec, const RecordTarget& target);

// The policy's answer: per spec (the given ones, then the tracking dummy
// when one was added), the attr to open.
struct EventAttrs {
  std::vector<EventSpec> specs;
  // config1 still holds the spec's own value where the kernel takes a
  // pointer (EventSpec::config1_string): the opener sets it at the call.
  std::vector<perf_event_attr> attrs;
  std::vector<bool> every_cpu;  // per spec: OpenedOnEveryCpu
  size_t mmap_pages = 0;        // data pages per ring: -m, or as ChooseRingPages chose
  // Where the file writer inserts the CPU; nullopt when the kernel writes
  // it (PERF_SAMPLE_CPU in every attr).
  std::optional<CpuFieldPlace> cpu_field;
  size_t tracking = 0;          // the spec asked for the sideband
  bool dummy_tracking = false;  // tracking is the dummy added for it
};

// Fails for settings that cannot be recorded (a stack-size= without a
// stack copy, a probe in a group that follows new threads, a ring that
// holds fewer than two stack copies, an unknown architecture).
Result<EventAttrs> BuildEventAttrs(std::vector<EventSpec> specs, const SamplingDefaults& defaults,
                                   const RecordTarget& target, const HostLimits& host);

}  // namespace sample::record
