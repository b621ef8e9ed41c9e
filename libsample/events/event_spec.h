// The `-e` event list, parsed as perf spells it, into perf_event_attr.
//
// Accepted (comma-separated; braces make a group, `{a,b}:S` included):
//   cpu-clock, cs, cycles, ...        generic software and hardware events
//   L1-dcache-load-misses, LLC-loads  hardware cache events
//   r1a8                              raw event (hex config)
//   cpu/event=0x3c,umask=0/, msr/tsc/ a sysfs PMU with format terms or
//                                     one of its named events
//   sched:sched_switch                tracepoint (id from tracefs)
//   mem:0x1000/8:w                    hardware breakpoint (r, w, x, rw)
//   uprobe:/bin/ls:main+4             uprobe / uretprobe through the uprobe
//   uretprobe:/bin/ls:main            PMU (no tracefs probe definitions)
//   kprobe:ksys_write+4               kprobe / kretprobe through the kprobe
//   kretprobe:ksys_write              PMU (the kernel looks the name up)
// Any event takes slash terms (`cpu-clock/period=100000,call-graph=fp/`:
// period, freq, call-graph (fp, dwarf or no), stack-size (bytes of user
// stack for dwarf), name; on=NAME and off=NAME (this event switches the
// event NAME of the same list on or off, see EventSpec::toggles),
// toggle=thread|cpu, start=on|off (a toggled event's state at the start);
// PMU events also config, config1, config2 and their
// format terms) and modifiers after ':' or right after the closing
// slash: u, k, h (count only in user, kernel, hypervisor), p/pp/ppp (skid),
// S (groups: the leader samples, the members are read with it).
//
// Parsing touches sysfs only for PMU events and uprobes, tracefs only for
// tracepoints; both roots are options so tests can use fake trees.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libsample/perf/chain_capture.h"
#include "libsample/result.h"

namespace sample {

enum class ToggleScope : uint8_t { kThread = 0, kCpu = 1 };

// What a trigger does to one event when it fires.
struct ToggleAction {
  size_t target = 0;  // index in the parsed list
  bool on = false;    // on=, else off=
};

// One event of a parsed `-e` list.
struct EventSpec {
  // Display name: the canonical perf name for generic and cache events
  // ("cycles" for cpu-cycles, "context-switches" for cs) followed by the
  // event's terms and modifiers as written ("cycles:u"); anything else as
  // written ("sched:sched_switch", "r1a8", "cpu/event=0x3c/"). A name= term
  // replaces it.
  std::string name;
  // type, config, config1, config2, bp_type/bp_addr/bp_len, exclude_user,
  // exclude_kernel, exclude_hv, precise_ip; sample_period, or freq and
  // sample_freq, only when a term gives them. Everything else is zero: size
  // and the sampling flags are the recorder's.
  perf_event_attr attr{};
  bool period_given = false;  // a period=N term
  bool freq_given = false;    // a freq=N term
  // Tracepoints, breakpoints and uprobe/kprobe PMU events count
  // occurrences that each matter (a syscall, a write to a variable, a call):
  // unless -c, -F or a period/freq term says otherwise they sample every
  // hit (period 1), as perf does, not at the recording's frequency, which
  // would keep a handful of a thousand calls.
  bool every_hit = false;
  // PERF_SAMPLE_PERIOD left out of the samples: the kernel writes a
  // tracepoint's every hit as a sample of period 1 when they carry the
  // period, whatever sample_period says; without it, every sample_period-th
  // hit (--alloc -c N).
  bool without_period = false;
  // The samples carry the user stack, frame and instruction pointers even
  // when the call chains need no registers (--alloc's calls).
  bool wants_stack_pointer = false;
  std::optional<ChainCapture> chain_capture;  // a call-graph=fp|dwarf|no term
  std::optional<uint32_t> stack_size;         // a stack-size=N term, checked and rounded to 8
  int group_index = -1;       // -1: not in a group; else its group's index (0, 1, ...)
  bool group_leader = false;  // first event of its group
  // In a group with the S modifier: only the leader samples, and its
  // samples carry the members' counts (PERF_SAMPLE_READ, PERF_FORMAT_GROUP).
  bool sample_read = false;
  // exclude_kernel came from EventParseOptions::exclude_kernel_default (no
  // u/k/h modifier): the recorder says why the kernel is left out.
  bool kernel_excluded_by_default = false;
  // Toggle events (the on=/off= terms): this event, a trigger, switches
  // others on or off each time it fires, for the thread it fired in
  // (toggle=thread, the default) or its CPU (toggle=cpu). `toggle_names`
  // are the terms as written (true: on=), `toggles` what they name, as
  // indices into the parsed list. A group's leader named stands for the
  // whole group.
  std::vector<std::pair<bool, std::string>> toggle_names;
  std::vector<ToggleAction> toggles;
  ToggleScope toggle_scope = ToggleScope::kThread;
  bool toggle_scope_given = false;
  // Some trigger switches this event: it counts or keeps samples only
  // inside on..off windows, which start closed unless start=on.
  bool toggled = false;
  bool starts_on = false;
  bool start_given = false;
  // uprobe PMU events: the kernel takes the path as a user pointer, so the
  // recorder sets attr.config1 = (uint64_t)uprobe_path.c_str() right before
  // perf_event_open, while this string is alive. config2 already holds the
  // file offset of the probe.
  std::string uprobe_path;
  // kprobe PMU events: the kernel function's name, which the kernel takes
  // as a user pointer in config1 as it takes uprobe_path (config2 holds
  // the offset into the function).
  std::string kprobe_function;
  // Tracepoints: the tracefs format text of the event (empty if tracefs
  // would not give it), stored in the file so the report can name the
  // fields of the raw payload.
  std::string trace_format;
  // Tracepoints: the --filter expression that followed the event on the
  // command line, set with PERF_EVENT_IOC_SET_FILTER; empty: none.
  std::string filter;

  // Opened with group_fd -1 and switched on and off itself: a group's
  // leader or an event outside any group (members follow their leader).
  bool IsLeaderOrAlone() const { return group_index < 0 || group_leader; }

  // The string the kernel reads through the pointer in attr.config1, or
  // nullptr for events whose config1 is a plain value.
  const char* config1_string() const {
    if (!uprobe_path.empty()) return uprobe_path.c_str();
    if (!kprobe_function.empty()) return kprobe_function.c_str();
    return nullptr;
  }
};

struct EventParseOptions {
  // Where bus/event_source/devices/ lives.
  std::string sysfs_root = "/sys";
  // Empty: find (or mount) the system's tracefs, see Tracefs::Locate.
  std::string tracefs_root;
  // The recorder sets this when it is not root and perf_event_paranoid >= 2:
  // events without an explicit u/k/h modifier get exclude_kernel = 1.
  // Tracepoints are exempt: they fire in the kernel, so excluding it would
  // drop every sample (opening them needs privilege anyway).
  bool exclude_kernel_default = false;
};

// Parses a perf `-e` argument: comma-separated events and `{...}` groups,
// e.g. "cpu-clock,{cycles,instructions}:S,sched:sched_switch". An error
// names the offending event and what is wrong with it: an unknown event
// lists close matches (or points to --list-events), an unknown term lists
// the valid ones.
Result<std::vector<EventSpec>> ParseEventList(std::string_view text,
                                              const EventParseOptions& options);

// The events --list-events shows: generic software events, generic hardware
// events (all of them: which open depends on the machine), hardware cache
// events, sysfs PMUs as "pmu//" and their named events as "pmu/event/",
// and, if `tracepoint_glob` is not empty, the tracepoints matching it
// ("sched:*"). PMUs whose events need a tracepoint id, an address or a path
// (tracepoint, breakpoint, uprobe, kprobe) are not listed as "pmu//", which
// the kernel refuses: ParametrizedEventForms gives their syntax. An error
// only if tracepoints were asked for and tracefs cannot be found.
Result<std::vector<std::string>> ListEvents(const EventParseOptions& options,
                                            std::string_view tracepoint_glob);

// How to write an event that takes a parameter, for --list-events.
struct EventForm {
  std::string syntax;       // "mem:ADDR[/LEN][:rwx]"
  std::string description;  // "hardware breakpoint: ..."
};

// The parametrized events this kernel offers (its sysfs has their PMU) and
// -e accepts: tracepoints, breakpoints, uprobes, uretprobes, kprobes and
// kretprobes.
std::vector<EventForm> ParametrizedEventForms(const EventParseOptions& options);

}  // namespace sample
