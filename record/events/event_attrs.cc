#include "record/events/event_attrs.h"

#include <linux/capability.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "libsample/perf/capabilities.h"
#include "libsample/perf/perf_event_advice.h"
#include "record/events/ring_size.h"

namespace sample::record {
namespace {

// Samples that may come near the 64 KiB a record's u16 size allows keep
// PERF_SAMPLE_CPU in the ring buffers: no room to insert it afterwards.
constexpr size_t kLargestSampleWithoutRingCpu = 60 * 1024;

// The user stack copy and the user registers a sample of `attr` carries.
size_t StackCopyBytes(const perf_event_attr& attr) {
  size_t size = 0;
  if (attr.sample_type & PERF_SAMPLE_REGS_USER) {
    size += 8 * static_cast<size_t>(__builtin_popcountll(attr.sample_regs_user));
  }
  if (attr.sample_type & PERF_SAMPLE_STACK_USER) size += attr.sample_stack_user;
  return size;
}

// An upper bound on a sample's size for `attr`, `events` being how many
// events a group read may report, `max_stack` the kernel's chain limit.
size_t LargestSample(const perf_event_attr& attr, size_t events, int max_stack) {
  size_t size = 8 * 20;  // header and every fixed-size field, generously
  if (attr.sample_type & PERF_SAMPLE_CALLCHAIN) {
    size_t depth = attr.sample_max_stack;
    if (depth == 0) depth = static_cast<size_t>(max_stack);
    size += 8 * (depth + 1 + 8);  // nr, entries, context markers
  }
  if (attr.sample_type & PERF_SAMPLE_READ) size += 8 * 3 + 16 * events;
  size += StackCopyBytes(attr) + 8 * 3;                  // and the abi, size and dyn_size words
  if (attr.sample_type & PERF_SAMPLE_RAW) size += 8192;  // the kernel's largest trace record
  return size;
}

// The dummy event that tracks the sideband of a delayed recording: the
// first event's privilege (a user-only recording's sideband is the user's)
// and chain capture (so that every event's records have one layout).
EventSpec TrackingSpec(const EventSpec& first) {
  EventSpec spec;
  spec.attr.type = PERF_TYPE_SOFTWARE;
  spec.attr.config = PERF_COUNT_SW_DUMMY;
  spec.attr.exclude_kernel = first.attr.exclude_kernel;
  spec.attr.exclude_user = first.attr.exclude_user;
  spec.attr.exclude_hv = first.attr.exclude_hv;
  spec.name = spec.attr.exclude_kernel ? "dummy:u" : "dummy";
  // It never counts anything: a fixed period spares the frequency logic.
  spec.attr.sample_period = 1;
  spec.period_given = true;
  spec.chain_capture = first.chain_capture;
  spec.stack_size = first.stack_size;
  return spec;
}

// The recording's chain capture as the event's terms change them, as
// perf does: call-graph=MODE replaces the mode (keeping the recording's
// leaf and size when the mode is the same), stack-size=N replaces the size
// of whichever mode copies the stack.
Result<ChainCaptureOptions> EventChainCapture(const EventSpec& spec,
                                              const ChainCaptureOptions& defaults) {
  ChainCaptureOptions options = defaults;
  if (spec.chain_capture && *spec.chain_capture != defaults.mode) {
    options = DefaultChainCapture(*spec.chain_capture);
  }
  if (spec.stack_size) {
    if (options.stack_size == 0) {
      return Fail(fmt::format(
          "stack-size={} needs a call graph that copies the stack: add call-graph=dwarf to the "
          "event or use --call-graph dwarf (or fp,leaf)",
          *spec.stack_size));
    }
    options.stack_size = *spec.stack_size;
  }
  return options;
}

// A sample larger than the ring buffer is dropped whole, and one that fills
// most of it leaves no room for the next while we drain: -m 2 (8 KiB) with
// 8 KiB stack copies loses every sample. Room for two is asked for, as the
// least that records anything at a steady rate (half the buffer is the
// wakeup watermark: a wakeup per sample, the next written while we
// drain). Less than four once was refused too, but perf takes -m 8 with
// 8 KiB copies (three fit) and the losses it brings at high rates are
// counted and answered with advice at the end, as for any buffer.
Result<void> CheckBufferFitsStacks(const std::vector<perf_event_attr>& attrs, size_t pages,
                                   size_t page) {
  size_t largest = 0;
  uint32_t stack = 0;
  for (const perf_event_attr& attr : attrs) {
    if ((attr.sample_type & PERF_SAMPLE_STACK_USER) == 0) continue;
    // The copy, the registers, and 256 bytes for the header, the other
    // fields and a kernel call chain.
    const size_t sample = StackCopyBytes(attr) + 256;
    if (sample > largest) largest = sample;
    stack = std::max(stack, attr.sample_stack_user);
  }
  if (pages * page >= 2 * largest) return {};
  size_t needed = 1;
  while (needed * page < 2 * largest) needed *= 2;
  return Fail(fmt::format(
      "-m {} ({} KiB per CPU) holds fewer than two samples with {}-byte user stack copies; "
      "use -m {} or more, or copy less stack (--call-graph dwarf,SIZE or stack-size=SIZE)",
      pages, pages * page / 1024, stack, needed));
}

// The sampling rate: a counting group member never samples; terms that
// give a period or frequency are kept; else -c, -F, or the default (every
// hit for events that count occurrences, kDefaultFrequency for others).
void SetSamplingRate(const EventSpec& spec, const SamplingDefaults& defaults,
                     perf_event_attr* attr) {
  const bool counting_member = spec.sample_read && !spec.group_leader;
  if (counting_member) {
    // Read through the leader's samples; never samples itself.
    attr->sample_period = 0;
    attr->freq = 0;
  } else if (!spec.period_given && !spec.freq_given) {
    if (defaults.period != 0) {
      attr->sample_period = defaults.period;
    } else if (defaults.frequency != 0 || !spec.every_hit) {
      attr->freq = 1;
      attr->sample_freq = defaults.frequency != 0 ? defaults.frequency : kDefaultFrequency;
    } else {
      attr->sample_period = 1;
    }
  }
}

// Whether the kernel counts `attr`'s event through perf_swevent_event:
// software events but the clocks (hrtimer-driven), tracepoints, probes
// and breakpoints. At a fixed period, such an event whose samples carry
// PERF_SAMPLE_PERIOD is written at every hit (the period is the hit's
// count, 1), whatever sample_period says; without the field the kernel
// keeps every Nth, each standing for sample_period hits, as perf's -c.
bool CountedByHits(const EventSpec& spec, const perf_event_attr& attr) {
  if (attr.type == PERF_TYPE_SOFTWARE) {
    return attr.config != PERF_COUNT_SW_CPU_CLOCK && attr.config != PERF_COUNT_SW_TASK_CLOCK;
  }
  return attr.type == PERF_TYPE_TRACEPOINT || attr.type == PERF_TYPE_BREAKPOINT || spec.every_hit;
}

// What a sample holds: `events` is how many events the recording opens.
Result<void> SetSampleLayout(const EventSpec& spec, size_t events, const SamplingDefaults& defaults,
                             perf_event_attr* attr) {
  // What crosses the ring buffer is kept as small as perf's, so that a
  // buffer holds as many samples: the CPU is known from the buffer (each
  // is one CPU's) and is inserted by the file writer (cpu_field()), and
  // the identifier is asked for only when there are several events to
  // tell apart (first then: every record names its event, whatever its
  // layout).
  attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  if (events > 1) attr->sample_type |= PERF_SAMPLE_IDENTIFIER;
  // A tracepoint's payload is the data: its fields (fd, count, comm) are
  // what --script prints. LargestSample counts it, so the CPU field is
  // still inserted after the ring buffer (RAW comes after CPU).
  if (spec.attr.type == PERF_TYPE_TRACEPOINT) attr->sample_type |= PERF_SAMPLE_RAW;
  if (spec.without_period ||
      (!attr->freq && attr->sample_period > 1 && CountedByHits(spec, *attr))) {
    attr->sample_type &= ~static_cast<uint64_t>(PERF_SAMPLE_PERIOD);
  }
  if (defaults.data.addresses) attr->sample_type |= PERF_SAMPLE_ADDR;
  if (defaults.data.physical) attr->sample_type |= PERF_SAMPLE_PHYS_ADDR;
  if (defaults.data.page_size) attr->sample_type |= PERF_SAMPLE_DATA_PAGE_SIZE;
  auto chain_capture = EventChainCapture(spec, defaults.chain_capture);
  if (!chain_capture) {
    return Fail(fmt::format("event '{}': {}", spec.name, chain_capture.error().message));
  }
  if (auto applied = ApplyChainCapture(*chain_capture, defaults.arch, attr); !applied) {
    return Fail(fmt::format("event '{}': {}", spec.name, applied.error().message));
  }
  // The stack pointer at each call orders --alloc's calls in flight
  // (report/load/allocations.h), whatever the chains record.
  if (spec.wants_stack_pointer && attr->sample_regs_user == 0) {
    attr->sample_type |= PERF_SAMPLE_REGS_USER;
    attr->sample_regs_user = LeafRegsMask(defaults.arch);
  }
  if ((attr->sample_type & PERF_SAMPLE_CALLCHAIN) && defaults.max_stack != 0) {
    attr->sample_max_stack = static_cast<uint16_t>(defaults.max_stack);
  }
  if (spec.sample_read && spec.group_leader) {
    attr->sample_type |= PERF_SAMPLE_READ;
    attr->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  }
  // The final count of every event is read at the end with the time it
  // was enabled and running, so the file says how much the kernel
  // multiplexed it (ReadCounts). Samples of a group leader carry the two
  // times as well (16 bytes more); the parsers follow read_format.
  attr->read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return {};
}

// When the event is on, and what else it records: inherit, enable-on-exec
// and, for the tracking event, the sideband.
void SetLifeAndSideband(const EventSpec& spec, bool tracking, const SamplingDefaults& defaults,
                        const RecordTarget& target, perf_event_attr* attr) {
  // Group members follow their leader's enable state.
  const bool leader = spec.IsLeaderOrAlone();
  const bool on_at_exec = !defaults.delayed || tracking;
  attr->disabled = leader;
  attr->enable_on_exec = leader && target.kind == TargetKind::kCommand && on_at_exec;
  attr->inherit = target.inherit;
  if (OpenedOnEveryCpu(spec, target)) {
    // Not a task's event: EnableAll turns it on with the others.
    attr->inherit = 0;
    attr->enable_on_exec = 0;
  }
  if (tracking) {
    attr->mmap = 1;
    attr->mmap2 = 1;
    attr->comm = 1;
    attr->comm_exec = 1;
    attr->task = 1;
    attr->context_switch = defaults.switch_events;
    // Where data addresses point: anonymous memory, the heap, the stack,
    // files mapped for reading.
    attr->mmap_data = defaults.data.addresses;
  }
  attr->sample_id_all = 1;
  if (!spec.attr.exclude_user && !spec.attr.exclude_kernel) attr->exclude_hv = 1;
  // CLOCK_MONOTONIC timestamps: records we synthesize from /proc can be
  // stamped on the same clock, and times line up with the host's.
  attr->use_clockid = 1;
  attr->clockid = CLOCK_MONOTONIC;
}

// The attr of `specs[i]`, `tracking` telling the sideband's event.
Result<perf_event_attr> EventAttr(const std::vector<EventSpec>& specs, size_t i, size_t tracking,
                                  const SamplingDefaults& defaults, const RecordTarget& target) {
  const EventSpec& spec = specs[i];
  if (OpenedOnEveryCpu(spec, target) && spec.group_index >= 0) {
    return Fail(fmt::format(
        "event '{}': a probe in a group cannot follow new threads (the kernel would make the "
        "program's fork fail): take it out of the group, or record with --no-inherit",
        spec.name));
  }
  perf_event_attr attr = spec.attr;
  attr.size = sizeof(attr);
  SetSamplingRate(spec, defaults, &attr);
  TRY(SetSampleLayout(spec, specs.size(), defaults, &attr));
  SetLifeAndSideband(spec, i == tracking, defaults, target, &attr);
  // Wake up when half the buffer is full, as the kernel's default (and
  // perf) does. Each wakeup costs the recorder about 70-90 us of CPU here
  // (a context switch into a VM guest's poll), so at -m 8 and 50 kHz a
  // quarter meant 1,150 wakeups a second and twice perf's recorder CPU
  // for the wakeups alone; the half left as headroom suffices because the
  // draining thread asks for a short scheduler slice and so runs as soon
  // as it is woken (ring_drainer.cc, RequestShortSlice). The watermark is
  // set once the ring's size is known.
  attr.watermark = 1;
  return attr;
}

// -m, or the size ChooseRingPages gives for the stack copies' rate.
size_t RingPages(const std::vector<perf_event_attr>& attrs, const SamplingDefaults& defaults,
                 const RecordTarget& target, const HostLimits& host) {
  if (defaults.mmap_pages != 0) return defaults.mmap_pages;
  RingLimits limits;
  limits.page_size = host.page_size;
  limits.rings = target.cpus.empty() ? host.online_cpus : target.cpus.size();
  limits.memory_bytes = host.memory_bytes;
  limits.may_lock_more = host.may_lock_more;
  return ChooseRingPages(StackCopyBytesPerSecond(attrs), limits);
}

// The CPU field goes in at one place for every event, or the kernel
// writes it (the writer does not look records' events up). So it does
// when a sample can come near 64 KiB (large stack copies, very deep
// chains): no room to insert the field, and 8 bytes are nothing there.
std::optional<CpuFieldPlace> PlaceCpuField(std::vector<perf_event_attr>& attrs, int max_stack) {
  std::optional<CpuFieldPlace> cpu_field;
  for (const perf_event_attr& attr : attrs) {
    perf_event_attr with_cpu = attr;
    with_cpu.sample_type |= PERF_SAMPLE_CPU;
    const CpuFieldPlace place = CpuFieldPlaceOf(with_cpu);
    if (LargestSample(attr, attrs.size(), max_stack) > kLargestSampleWithoutRingCpu ||
        (cpu_field && !(*cpu_field == place))) {
      for (perf_event_attr& a : attrs) a.sample_type |= PERF_SAMPLE_CPU;
      return std::nullopt;
    }
    cpu_field = place;
  }
  return cpu_field;
}

}  // namespace

HostLimits ReadHostLimits() {
  HostLimits host;
  host.page_size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  host.online_cpus = static_cast<size_t>(sysconf(_SC_NPROCESSORS_ONLN));
  host.memory_bytes = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * host.page_size;
  host.may_lock_more = HasEffectiveCapability(CAP_IPC_LOCK);
  host.max_stack = ReadPerfEventMaxStack().value_or(127);
  return host;
}

bool OpenedOnEveryCpu(const EventSpec& spec, const RecordTarget& target) {
  // The kernel builds an inherited uprobe (or kprobe) event again in each
  // new thread and reads the probe's path (function) from the attr's
  // config1 pointer there, in the forking program's memory, where it means
  // nothing: its fork() or pthread_create() fails with EFAULT (EACCES for a
  // program without CAP_PERFMON). So a probe is never inherited: for a
  // target that follows new threads it is opened once per CPU for every
  // process, which sees them all.
  return spec.config1_string() != nullptr && target.inherit && target.kind != TargetKind::kCpus;
}

Result<EventAttrs> BuildEventAttrs(std::vector<EventSpec> specs, const SamplingDefaults& defaults,
                                   const RecordTarget& target, const HostLimits& host) {
  if (specs.empty()) return Fail("no events to record");
  EventAttrs out;
  // Sampling that starts late (-D) must still see the exec's COMM and every
  // MMAP2 before it, or no frame resolves: a dummy event (it never samples)
  // carries the sideband from the start. So must a recording whose first
  // event is a probe opened for every process (OpenedOnEveryCpu): its
  // sideband would be every process's.
  out.dummy_tracking =
      defaults.delayed || defaults.separate_tracking || OpenedOnEveryCpu(specs.front(), target);
  if (out.dummy_tracking) {
    out.tracking = specs.size();
    specs.push_back(TrackingSpec(specs.front()));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    TRY_ASSIGN(auto attr, EventAttr(specs, i, out.tracking, defaults, target));
    out.attrs.push_back(attr);
    out.every_cpu.push_back(OpenedOnEveryCpu(specs[i], target));
  }
  out.mmap_pages = RingPages(out.attrs, defaults, target, host);
  for (perf_event_attr& attr : out.attrs) {
    attr.wakeup_watermark = static_cast<uint32_t>(out.mmap_pages * host.page_size / 2);
  }
  TRY(CheckBufferFitsStacks(out.attrs, out.mmap_pages, host.page_size));
  out.cpu_field = PlaceCpuField(out.attrs, host.max_stack);
  out.specs = std::move(specs);
  return out;
}

}  // namespace sample::record
