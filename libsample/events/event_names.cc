#include "libsample/events/event_names.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include <fmt/format.h>

#include "libsample/events/name_suggestions.h"
#include "libsample/events/pmu_format.h"
#include "libsample/string_parts.h"

namespace sample {
namespace {

constexpr uint32_t kSw = PERF_TYPE_SOFTWARE;
constexpr uint32_t kHw = PERF_TYPE_HARDWARE;
// PERF_COUNT_SW_BPF_OUTPUT (Linux 4.4) and PERF_COUNT_SW_CGROUP_SWITCHES
// (5.13) as numbers: the uapi values are fixed, and older headers, where
// these enumerators are missing, cannot be tested with #ifdef.
constexpr uint64_t kSwBpfOutput = 10;
constexpr uint64_t kSwCgroupSwitches = 11;

// perf's generic event names and aliases (tools/perf/util/parse-events.c).
constexpr std::array kGenericEvents = {
    GenericEvent{"cpu-clock", "cpu-clock", kSw, PERF_COUNT_SW_CPU_CLOCK},
    GenericEvent{"task-clock", "task-clock", kSw, PERF_COUNT_SW_TASK_CLOCK},
    GenericEvent{"page-faults", "page-faults", kSw, PERF_COUNT_SW_PAGE_FAULTS},
    GenericEvent{"faults", "page-faults", kSw, PERF_COUNT_SW_PAGE_FAULTS},
    GenericEvent{"minor-faults", "minor-faults", kSw, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    GenericEvent{"major-faults", "major-faults", kSw, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    GenericEvent{"context-switches", "context-switches", kSw, PERF_COUNT_SW_CONTEXT_SWITCHES},
    GenericEvent{"cs", "context-switches", kSw, PERF_COUNT_SW_CONTEXT_SWITCHES},
    GenericEvent{"cpu-migrations", "cpu-migrations", kSw, PERF_COUNT_SW_CPU_MIGRATIONS},
    GenericEvent{"migrations", "cpu-migrations", kSw, PERF_COUNT_SW_CPU_MIGRATIONS},
    GenericEvent{"alignment-faults", "alignment-faults", kSw, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    GenericEvent{"emulation-faults", "emulation-faults", kSw, PERF_COUNT_SW_EMULATION_FAULTS},
    GenericEvent{"dummy", "dummy", kSw, PERF_COUNT_SW_DUMMY},
    GenericEvent{"bpf-output", "bpf-output", kSw, kSwBpfOutput},
    GenericEvent{"cgroup-switches", "cgroup-switches", kSw, kSwCgroupSwitches},
    GenericEvent{"cycles", "cycles", kHw, PERF_COUNT_HW_CPU_CYCLES},
    GenericEvent{"cpu-cycles", "cycles", kHw, PERF_COUNT_HW_CPU_CYCLES},
    GenericEvent{"instructions", "instructions", kHw, PERF_COUNT_HW_INSTRUCTIONS},
    GenericEvent{"cache-references", "cache-references", kHw, PERF_COUNT_HW_CACHE_REFERENCES},
    GenericEvent{"cache-misses", "cache-misses", kHw, PERF_COUNT_HW_CACHE_MISSES},
    GenericEvent{"branches", "branches", kHw, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    GenericEvent{"branch-instructions", "branches", kHw, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    GenericEvent{"branch-misses", "branch-misses", kHw, PERF_COUNT_HW_BRANCH_MISSES},
    GenericEvent{"bus-cycles", "bus-cycles", kHw, PERF_COUNT_HW_BUS_CYCLES},
    GenericEvent{"ref-cycles", "ref-cycles", kHw, PERF_COUNT_HW_REF_CPU_CYCLES},
    GenericEvent{"stalled-cycles-frontend", "stalled-cycles-frontend", kHw,
                 PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    GenericEvent{"idle-cycles-frontend", "stalled-cycles-frontend", kHw,
                 PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    GenericEvent{"stalled-cycles-backend", "stalled-cycles-backend", kHw,
                 PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    GenericEvent{"idle-cycles-backend", "stalled-cycles-backend", kHw,
                 PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
};

// Hardware cache event words as perf spells them (tools/perf/util/evsel.c);
// the first of each row is the canonical one. Matched case-insensitively.
using Aliases = std::array<std::string_view, 5>;
constexpr std::array<Aliases, PERF_COUNT_HW_CACHE_MAX> kCaches = {{
    {"L1-dcache", "l1-d", "l1d", "L1-data"},
    {"L1-icache", "l1-i", "l1i", "L1-instruction"},
    {"LLC", "L2"},
    {"dTLB", "d-tlb", "Data-TLB"},
    {"iTLB", "i-tlb", "Instruction-TLB"},
    {"branch", "branches", "bpu", "btb", "bpc"},
    {"node"},
}};
constexpr std::array<Aliases, PERF_COUNT_HW_CACHE_OP_MAX> kCacheOps = {{
    {"load", "loads", "read"},
    {"store", "stores", "write"},
    {"prefetch", "prefetches", "speculative-read", "speculative-load"},
}};
constexpr std::array<Aliases, PERF_COUNT_HW_CACHE_RESULT_MAX> kCacheResults = {{
    {"refs", "Reference", "ops", "access"},
    {"misses", "miss"},
}};
constexpr std::array<std::string_view, PERF_COUNT_HW_CACHE_OP_MAX> kCacheOpPlurals = {
    "loads", "stores", "prefetches"};
// Bit per op: which combinations --list-events shows, as perf lists them.
// Parsing accepts all; the kernel says what the CPU supports.
constexpr std::array<unsigned, PERF_COUNT_HW_CACHE_MAX> kCacheListedOps = {7, 5, 7, 7, 1, 1, 7};

// The row of `rows` one of whose aliases `text` starts with, followed by '-'
// or the end, and the alias length; the longest alias wins.
std::optional<std::pair<size_t, size_t>> MatchAlias(std::string_view text,
                                                    std::span<const Aliases> rows) {
  std::optional<std::pair<size_t, size_t>> best;
  for (size_t row = 0; row < rows.size(); ++row) {
    for (std::string_view alias : rows[row]) {
      if (alias.empty() || alias.size() > text.size()) continue;
      if (Lowercase(text.substr(0, alias.size())) != Lowercase(alias)) continue;
      if (alias.size() < text.size() && text[alias.size()] != '-') continue;
      if (!best || alias.size() > best->second) best = std::make_pair(row, alias.size());
    }
  }
  return best;
}

std::string CacheEventName(size_t cache, size_t op, size_t result) {
  if (result == PERF_COUNT_HW_CACHE_RESULT_ACCESS) {
    return fmt::format("{}-{}", kCaches[cache][0], kCacheOpPlurals[op]);
  }
  return fmt::format("{}-{}-misses", kCaches[cache][0], kCacheOps[op][0]);
}

}  // namespace

std::span<const GenericEvent> GenericEvents() { return kGenericEvents; }

const GenericEvent* FindGenericEvent(std::string_view name) {
  for (const GenericEvent& event : kGenericEvents) {
    if (event.name == name) return &event;
  }
  return nullptr;
}

std::optional<CacheEvent> ParseCacheEvent(std::string_view name) {
  const auto cache = MatchAlias(name, kCaches);
  if (!cache) return std::nullopt;
  std::string_view rest = name.substr(cache->second);
  std::optional<size_t> op;
  std::optional<size_t> result;
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the '-' MatchAlias checked
    if (const auto match = op ? std::nullopt : MatchAlias(rest, kCacheOps)) {
      op = match->first;
      rest.remove_prefix(match->second);
    } else if (const auto match = result ? std::nullopt : MatchAlias(rest, kCacheResults)) {
      result = match->first;
      rest.remove_prefix(match->second);
    } else {
      return std::nullopt;
    }
  }
  const size_t o = op.value_or(PERF_COUNT_HW_CACHE_OP_READ);
  const size_t r = result.value_or(PERF_COUNT_HW_CACHE_RESULT_ACCESS);
  return CacheEvent{cache->first | (o << 8) | (r << 16), CacheEventName(cache->first, o, r)};
}

std::vector<std::string> CacheEventNames() {
  std::vector<std::string> names;
  for (size_t cache = 0; cache < kCaches.size(); ++cache) {
    for (size_t op = 0; op < kCacheOps.size(); ++op) {
      if ((kCacheListedOps[cache] >> op & 1) == 0) continue;
      for (size_t result = 0; result < kCacheResults.size(); ++result) {
        names.push_back(CacheEventName(cache, op, result));
      }
    }
  }
  return names;
}

std::optional<uint64_t> ParseRawEvent(std::string_view name) {
  if (name.size() < 2 || name[0] != 'r' ||
      name.find_first_not_of("0123456789abcdefABCDEF", 1) != std::string_view::npos) {
    return std::nullopt;
  }
  auto value = ParseTermNumber(fmt::format("0x{}", name.substr(1)));
  return value ? std::optional(*value) : std::nullopt;
}

}  // namespace sample
