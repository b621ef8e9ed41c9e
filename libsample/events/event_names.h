// The fixed event names of perf's `-e` syntax and their lookup: the generic
// software and hardware events with their aliases ("cs" for
// context-switches), the hardware cache events written CACHE[-OP][-RESULT]
// in any of perf's spellings ("L1-dcache-load-misses", "l1d-load-miss"),
// and raw events written rNNNN. Nothing here reads sysfs or tracefs;
// libsample/events/event_spec.h resolves names against these first.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sample {

// One generic event name (or alias) and what it opens.
struct GenericEvent {
  std::string_view name;       // as written: "cs"
  std::string_view canonical;  // as perf shows it: "context-switches"
  uint32_t type;               // PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE
  uint64_t config;
};

// perf's generic event names and aliases, in perf's order
// (tools/perf/util/parse-events.c).
std::span<const GenericEvent> GenericEvents();

// The generic event named exactly `name` (aliases included), or null.
const GenericEvent* FindGenericEvent(std::string_view name);

// A hardware cache event: its PERF_TYPE_HW_CACHE config and the canonical
// name perf shows for it ("L1-dcache-load-misses").
struct CacheEvent {
  uint64_t config;
  std::string name;
};

// CACHE[-OP][-RESULT] (OP and RESULT in either order), as perf parses it,
// matched case-insensitively; missing parts are load and access.
std::optional<CacheEvent> ParseCacheEvent(std::string_view name);

// The cache events --list-events shows: the combinations perf lists.
// Parsing accepts all; the kernel says what the CPU supports.
std::vector<std::string> CacheEventNames();

// rNNNN: a raw hex config for PERF_TYPE_RAW.
std::optional<uint64_t> ParseRawEvent(std::string_view name);

}  // namespace sample
