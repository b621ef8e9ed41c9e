#include "record/events/event_opener.h"

#include <linux/capability.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "libsample/events/event_filter.h"
#include "libsample/perf/capabilities.h"
#include "libsample/perf/perf_event_advice.h"
#include "libsample/perf/perf_record.h"
#include "record/events/ring_size.h"
#include "record/counting/counters.h"

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
// events a group read may report.
size_t LargestSample(const perf_event_attr& attr, size_t events) {
  size_t size = 8 * 16;  // header and every fixed-size field, generously
  if (attr.sample_type & PERF_SAMPLE_CALLCHAIN) {
    size_t depth = attr.sample_max_stack;
    if (depth == 0) depth = static_cast<size_t>(ReadPerfEventMaxStack().value_or(127));
    size += 8 * (depth + 1 + 8);  // nr, entries, context markers
  }
  if (attr.sample_type & PERF_SAMPLE_READ) size += 8 * 3 + 16 * events;
  size += StackCopyBytes(attr) + 8 * 3;                  // and the abi, size and dyn_size words
  if (attr.sample_type & PERF_SAMPLE_RAW) size += 8192;  // the kernel's largest trace record
  return size;
}

}  // namespace

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

namespace {

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
Result<void> CheckBufferFitsStacks(const std::vector<perf_event_attr>& attrs, size_t pages) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
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

}  // namespace

std::vector<format::ToggleEntry> ToggleEntries(const std::vector<EventSpec>& specs) {
  std::vector<format::ToggleEntry> entries;
  for (size_t t = 0; t < specs.size(); ++t) {
    for (const ToggleAction& action : specs[t].toggles) {
      // The group's members follow its leader: each gets the relation too,
      // so a reader needs to know nothing of groups.
      for (size_t i = action.target; i < specs.size(); ++i) {
        if (i != action.target && (specs[action.target].group_index < 0 ||
                                   specs[i].group_index != specs[action.target].group_index)) {
          break;
        }
        format::ToggleEntry entry{};
        entry.trigger = static_cast<uint32_t>(t);
        entry.target = static_cast<uint32_t>(i);
        entry.action = action.on ? format::kToggleOn : format::kToggleOff;
        entry.scope = specs[t].toggle_scope == ToggleScope::kCpu ? format::kToggleCpu
                                                                  : format::kToggleThread;
        entry.target_starts_on = specs[i].starts_on ? 1 : 0;
        entries.push_back(entry);
      }
    }
  }
  return entries;
}

Result<EventOpener> EventOpener::Create(std::vector<EventSpec> specs,
                                        const SamplingDefaults& defaults,
                                        const RecordTarget& target) {
  if (specs.empty()) return Fail("no events to record");
  // Sampling that starts late (-D) must still see the exec's COMM and every
  // MMAP2 before it, or no frame resolves: a dummy event (it never samples)
  // carries the sideband from the start.
  size_t tracking = 0;
  // So must a recording whose first event is a probe opened for every
  // process (OpenedOnEveryCpu): its sideband would be every process's.
  const bool dummy_tracking = defaults.delayed || defaults.separate_tracking ||
                              OpenedOnEveryCpu(specs.front(), target);
  if (dummy_tracking) {
    tracking = specs.size();
    specs.push_back(TrackingSpec(specs.front()));
  }
  std::vector<perf_event_attr> attrs;
  for (size_t i = 0; i < specs.size(); ++i) {
    const EventSpec& spec = specs[i];
    if (OpenedOnEveryCpu(spec, target) && spec.group_index >= 0) {
      return Fail(fmt::format(
          "event '{}': a probe in a group cannot follow new threads (the kernel would make the "
          "program's fork fail): take it out of the group, or record with --no-inherit",
          spec.name));
    }
    perf_event_attr attr = spec.attr;
    attr.size = sizeof(attr);
    const bool counting_member = spec.sample_read && !spec.group_leader;
    if (counting_member) {
      // Read through the leader's samples; never samples itself.
      attr.sample_period = 0;
      attr.freq = 0;
    } else if (!spec.period_given && !spec.freq_given) {
      if (defaults.period != 0) {
        attr.sample_period = defaults.period;
      } else if (defaults.frequency != 0 || !spec.every_hit) {
        attr.freq = 1;
        attr.sample_freq = defaults.frequency != 0 ? defaults.frequency : kDefaultFrequency;
      } else {
        attr.sample_period = 1;
      }
    }
    // What crosses the ring buffer is kept as small as perf's, so that a
    // buffer holds as many samples: the CPU is known from the buffer (each
    // is one CPU's) and is inserted by the file writer (cpu_field()), and
    // the identifier is asked for only when there are several events to
    // tell apart (first then: every record names its event, whatever its
    // layout).
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
    if (specs.size() > 1) attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
    // A tracepoint's payload is the data: its fields (fd, count, comm) are
    // what --script prints. LargestSample counts it, so the CPU field is
    // still inserted after the ring buffer (RAW comes after CPU).
    if (spec.attr.type == PERF_TYPE_TRACEPOINT) attr.sample_type |= PERF_SAMPLE_RAW;
    auto chain_capture = EventChainCapture(spec, defaults.chain_capture);
    if (!chain_capture) {
      return Fail(fmt::format("event '{}': {}", spec.name, chain_capture.error().message));
    }
    if (auto applied = ApplyChainCapture(*chain_capture, defaults.arch, &attr); !applied) {
      return Fail(fmt::format("event '{}': {}", spec.name, applied.error().message));
    }
    if ((attr.sample_type & PERF_SAMPLE_CALLCHAIN) && defaults.max_stack != 0) {
      attr.sample_max_stack = static_cast<uint16_t>(defaults.max_stack);
    }
    if (spec.sample_read && spec.group_leader) {
      attr.sample_type |= PERF_SAMPLE_READ;
      attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
    }
    // The final count of every event is read at the end with the time it
    // was enabled and running, so the file says how much the kernel
    // multiplexed it (ReadCounts). Samples of a group leader carry the two
    // times as well (16 bytes more); the parsers follow read_format.
    attr.read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    // Group members follow their leader's enable state.
    const bool leader = spec.IsLeaderOrAlone();
    const bool on_at_exec = !defaults.delayed || i == tracking;
    attr.disabled = leader;
    attr.enable_on_exec = leader && target.kind == TargetKind::kCommand && on_at_exec;
    attr.inherit = target.inherit;
    if (OpenedOnEveryCpu(spec, target)) {
      // Not a task's event: EnableAll turns it on with the others.
      attr.inherit = 0;
      attr.enable_on_exec = 0;
    }
    if (i == tracking) {
      attr.mmap = 1;
      attr.mmap2 = 1;
      attr.comm = 1;
      attr.comm_exec = 1;
      attr.task = 1;
      attr.context_switch = defaults.switch_events;
    }
    attr.sample_id_all = 1;
    if (!spec.attr.exclude_user && !spec.attr.exclude_kernel) attr.exclude_hv = 1;
    // CLOCK_MONOTONIC timestamps: records we synthesize from /proc can be
    // stamped on the same clock, and times line up with the host's.
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    // Wake up when half the buffer is full, as the kernel's default (and
    // perf) does. Each wakeup costs the recorder about 70-90 us of CPU here
    // (a context switch into a VM guest's poll), so at -m 8 and 50 kHz a
    // quarter meant 1,150 wakeups a second and twice perf's recorder CPU
    // for the wakeups alone; the half left as headroom suffices because the
    // draining thread asks for a short scheduler slice and so runs as soon
    // as it is woken (ring_drainer.cc, RequestShortSlice).
    attr.watermark = 1;
    attrs.push_back(attr);
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t pages = defaults.mmap_pages;
  if (pages == 0) {
    RingLimits limits;
    limits.page_size = page;
    limits.rings = target.cpus.empty() ? static_cast<size_t>(sysconf(_SC_NPROCESSORS_ONLN))
                                       : target.cpus.size();
    limits.memory_bytes = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * page;
    limits.may_lock_more = HasEffectiveCapability(CAP_IPC_LOCK);
    pages = ChooseRingPages(StackCopyBytesPerSecond(attrs), limits);
  }
  for (perf_event_attr& attr : attrs) {
    attr.wakeup_watermark = static_cast<uint32_t>(pages * page / 2);
  }
  TRY(CheckBufferFitsStacks(attrs, pages));
  // The CPU field goes in at one place for every event, or the kernel
  // writes it (the writer does not look records' events up). So it does
  // when a sample can come near 64 KiB (large stack copies, very deep
  // chains): no room to insert the field, and 8 bytes are nothing there.
  std::optional<CpuFieldPlace> cpu_field;
  for (const perf_event_attr& attr : attrs) {
    perf_event_attr with_cpu = attr;
    with_cpu.sample_type |= PERF_SAMPLE_CPU;
    const CpuFieldPlace place = CpuFieldPlaceOf(with_cpu);
    if (LargestSample(attr, attrs.size()) > kLargestSampleWithoutRingCpu ||
        (cpu_field && !(*cpu_field == place))) {
      cpu_field.reset();
      for (perf_event_attr& a : attrs) a.sample_type |= PERF_SAMPLE_CPU;
      break;
    }
    cpu_field = place;
  }
  std::vector<bool> every_cpu;
  for (const EventSpec& spec : specs) every_cpu.push_back(OpenedOnEveryCpu(spec, target));
  EventOpener opener(std::move(specs), std::move(attrs), pages, cpu_field, tracking,
                     dummy_tracking);
  opener.every_cpu_ = std::move(every_cpu);
  return opener;
}

Result<void> EventOpener::EnableTracking() { return Enable(/*tracking_only=*/true); }

Result<void> EventOpener::EnableAll() { return Enable(/*tracking_only=*/false); }

Result<void> EventOpener::Enable(bool tracking_only) {
  for (size_t k = 0; k < events_.size(); ++k) {
    const size_t spec = event_specs_[k];
    if (tracking_only && spec != tracking_) continue;
    if (!specs_[spec].IsLeaderOrAlone()) continue;  // members follow their leader
    // enable_on_exec events wait for the exec; turning them on now would
    // sample the launcher between fork and exec.
    if (attrs_[spec].enable_on_exec) continue;
    if (auto enabled = events_[k].Enable(); !enabled) return enabled;
  }
  return {};
}

Result<void> EventOpener::SetSampling(bool on, std::optional<size_t> spec) {
  for (size_t k = 0; k < events_.size(); ++k) {
    const size_t i = event_specs_[k];
    if (dummy_tracking_ && i == tracking_) continue;
    if (!specs_[i].IsLeaderOrAlone() || (spec && i != *spec)) continue;
    // After the exec an enable_on_exec event is switched like any other.
    auto done = on ? events_[k].Enable() : events_[k].Disable();
    if (!done) {
      return Fail(fmt::format("{} '{}': {}", on ? "enabling" : "disabling", specs_[i].name,
                              done.error().message));
    }
  }
  return {};
}

Result<size_t> EventOpener::FindSwitchable(std::string_view name) const {
  std::string names;
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (dummy_tracking_ && i == tracking_) continue;
    if (specs_[i].name == name) {
      if (specs_[i].IsLeaderOrAlone()) return i;
      for (const EventSpec& leader : specs_) {
        if (leader.group_leader && leader.group_index == specs_[i].group_index) {
          return Fail(
              fmt::format("'{}' is a group member: it follows its leader '{}'", name, leader.name));
        }
      }
    }
    names += (names.empty() ? "" : ", ") + specs_[i].name;
  }
  return Fail(fmt::format("no event named '{}' (events: {})", name, names));
}

Result<void> EventOpener::Open(const RecordTarget& target) {
  events_.clear();
  event_specs_.clear();
  event_threads_.clear();
  ring_owners_.clear();
  for (auto& ids : ids_) ids.clear();
  for (int cpu : target.cpus) {
    const size_t owner = events_.size();
    std::vector<bool> opened_on_cpu(specs_.size(), false);
    for (pid_t thread : target.threads) {
      const size_t thread_start = events_.size();
      int leader_fd = -1;
      bool thread_gone = false;
      for (size_t i = 0; i < specs_.size() && !thread_gone; ++i) {
        // Opened once per CPU, with the first thread whose events open.
        if (every_cpu_[i] && opened_on_cpu[i]) continue;
        const pid_t pid = every_cpu_[i] ? -1 : thread;
        perf_event_attr attr = attrs_[i];
        if (const char* pointee = specs_[i].config1_string()) {
          // The kernel copies the uprobe's path or the kprobe's function
          // name from this pointer during the call.
          attr.config1 = reinterpret_cast<uint64_t>(pointee);
        }
        const int group_fd = specs_[i].IsLeaderOrAlone() ? -1 : leader_fd;
        auto event = PerfEvent::Open(attr, pid, cpu, group_fd, 0);
        if (!event) {
          if (event.error().sys_errno == ESRCH && target.threads.size() > 1) {
            thread_gone = true;
            break;
          }
          const int err = event.error().sys_errno;
          if (!specs_[i].kprobe_function.empty() && (err == ENOENT || err == EINVAL)) {
            return Fail(
                fmt::format("event '{}': {}; is '{}' a kernel function in /proc/kallsyms "
                            "that kprobes may probe (not inlined, not on the kprobe "
                            "blacklist), and the offset at an instruction?",
                            specs_[i].name, event.error().message, specs_[i].kprobe_function),
                err);
          }
          return Fail(fmt::format("event '{}': {}", specs_[i].name, event.error().message), err);
        }
        if (!specs_[i].filter.empty()) {
          if (auto filtered = event->SetFilter(specs_[i].filter); !filtered) {
            return Fail(FilterRefusedMessage(specs_[i], filtered.error().sys_errno),
                        filtered.error().sys_errno);
          }
        }
        if (specs_[i].group_leader) leader_fd = event->fd();
        ids_[i].push_back(event->id());
        events_.push_back(std::move(*event));
        event_specs_.push_back(i);
        event_threads_.push_back(pid);
        opened_on_cpu[i] = true;
      }
      if (thread_gone) {
        // Drop what was opened for this thread (and its ids).
        for (size_t k = thread_start; k < events_.size(); ++k) {
          if (event_threads_[k] == -1) opened_on_cpu[event_specs_[k]] = false;
          for (auto& ids : ids_) std::erase(ids, events_[k].id());
        }
        events_.erase(events_.begin() + static_cast<std::ptrdiff_t>(thread_start), events_.end());
        event_specs_.resize(thread_start);
        event_threads_.resize(thread_start);
      }
    }
    if (events_.size() == owner) return Fail("every target thread exited while attaching");
    ring_owners_.push_back(owner);
    if (auto mapped = events_[owner].Map(mmap_pages_); !mapped) return mapped;
    for (size_t i = owner + 1; i < events_.size(); ++i) {
      if (auto redirected = events_[i].RedirectOutputTo(events_[owner]); !redirected) {
        return redirected;
      }
    }
  }
  return {};
}

Result<format::Counts> EventOpener::ReadCounts(uint64_t elapsed_ns) const {
  format::Counts counts;
  counts.source = format::kCountsFromSampling;
  counts.elapsed_ns = elapsed_ns;
  std::vector<size_t> index(specs_.size(), SIZE_MAX);  // spec -> its entry in counts
  for (size_t i = 0; i < specs_.size(); ++i) {
    const perf_event_attr& a = attrs_[i];
    // The -D sideband dummy counts nothing.
    if (a.type == PERF_TYPE_SOFTWARE && a.config == PERF_COUNT_SW_DUMMY) continue;
    index[i] = counts.events.size();
    format::EventCounts e;
    e.name = specs_[i].name;
    e.attr = a;
    e.attr.config1 = specs_[i].config1_string() == nullptr ? a.config1 : 0;  // no stale pointer
    counts.events.push_back(std::move(e));
  }
  std::vector<FdTotals> fds;
  for (size_t k = 0; k < events_.size(); ++k) {
    const size_t spec = event_specs_[k];
    if (index[spec] == SIZE_MAX) continue;
    auto totals = ReadCounterTotals(events_[k].fd(), attrs_[spec].read_format);
    if (!totals) {
      return Fail(
          fmt::format("reading the count of '{}': {}", specs_[spec].name, totals.error().message));
    }
    fds.push_back({index[spec], event_threads_[k], *totals});
  }
  const std::vector<CounterTotals> sums = SumFdTotals(fds, counts.events.size());
  for (size_t i = 0; i < sums.size(); ++i) {
    counts.events[i].count = sums[i].count;
    counts.events[i].time_enabled = sums[i].enabled;
    counts.events[i].time_running = sums[i].running;
  }
  return counts;
}

std::vector<EventDesc> EventOpener::DescribeFile() const {
  std::vector<EventDesc> descs = Describe();
  if (cpu_field_) {
    for (EventDesc& d : descs) d.attr.sample_type |= PERF_SAMPLE_CPU;
  }
  return descs;
}

std::vector<EventDesc> EventOpener::Describe() const {
  std::vector<EventDesc> descs;
  for (size_t i = 0; i < specs_.size(); ++i) {
    EventDesc d;
    d.attr = attrs_[i];
    d.attr.config1 =
        specs_[i].config1_string() == nullptr ? attrs_[i].config1 : 0;  // no stale pointer
    d.name = specs_[i].name;
    d.ids = ids_[i];
    descs.push_back(std::move(d));
  }
  return descs;
}

}  // namespace sample::record
