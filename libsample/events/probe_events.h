// The `-e` events that name a place rather than a counter: hardware
// breakpoints, mem:ADDR[/LEN][:rwx], and uprobes, uprobe:PATH:SYMBOL[+OFFSET]
// and uretprobe:PATH:SYMBOL, opened through the uprobe PMU with the probe's
// file offset found from the binary's ELF symbols (exact or demangled
// names, with or without a parameter list, or a 0x address); and kprobes,
// kprobe:FUNCTION[+OFFSET] and kretprobe:FUNCTION, through the kprobe PMU,
// which takes the kernel function's name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "libsample/events/event_list_syntax.h"
#include "libsample/events/event_spec.h"
#include "libsample/events/pmu_format.h"
#include "libsample/result.h"

namespace sample {

// Sets the breakpoint fields of spec->attr from a mem: event; `*mods` gets
// the modifiers after the access letters, if any.
Result<void> ParseBreakpoint(const RawEvent& raw, EventSpec* spec, std::string_view* mods);

// Where a uprobe: or uretprobe: event probes.
struct UprobeTarget {
  bool retprobe = false;
  std::string path;          // canonical path of the binary
  uint64_t file_offset = 0;  // of the probed instruction
};

// Finds the binary and the file offset of the probed instruction; `*mods`
// gets trailing modifiers, if any.
Result<UprobeTarget> ParseUprobe(const RawEvent& raw, std::string_view* mods);

// Fills spec for `target` on the uprobe PMU `pmu`: type, the retprobe
// format bit, config2 = file offset and uprobe_path. `text` is named in
// errors.
Result<void> ApplyUprobe(const UprobeTarget& target, const Pmu& pmu, std::string_view text,
                         EventSpec* spec);

// Where a kprobe: or kretprobe: event probes: kprobe:FUNCTION[+OFFSET] and
// kretprobe:FUNCTION, with optional :modifiers.
struct KprobeTarget {
  bool retprobe = false;
  std::string function;
  uint64_t offset = 0;
};

// Parses the event's text (no lookup: the kernel resolves the function
// when the event is opened); `*mods` gets trailing modifiers, if any.
Result<KprobeTarget> ParseKprobe(const RawEvent& raw, std::string_view* mods);

// Fills spec for `target` on the kprobe PMU `pmu`: type, the retprobe
// format bit, kprobe_function (config1 at open) and config2 = offset.
Result<void> ApplyKprobe(const KprobeTarget& target, const Pmu& pmu, std::string_view text,
                         EventSpec* spec);

}  // namespace sample
