#include "libsample/event_spec.h"

#include <linux/hw_breakpoint.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "libsample/elf_symbols.h"
#include "libsample/pmu_format.h"
#include "libsample/tracefs.h"

namespace sample {
namespace {

namespace fs = std::filesystem;

struct GenericEvent {
  std::string_view name;
  std::string_view canonical;
  uint32_t type;
  uint64_t config;
};

constexpr uint32_t kSw = PERF_TYPE_SOFTWARE;
constexpr uint32_t kHw = PERF_TYPE_HARDWARE;

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

constexpr std::string_view kModifierLetters = "ukhpS";
constexpr std::string_view kGenericTerms = "period, freq, call-graph, name";

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), Lower);
  return out;
}

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

// CACHE[-OP][-RESULT] (either order), as perf parses it; missing parts are
// load and access. Returns the config and the canonical name.
std::optional<std::pair<uint64_t, std::string>> ParseCacheEvent(std::string_view name) {
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
  return std::make_pair(cache->first | (o << 8) | (r << 16), CacheEventName(cache->first, o, r));
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

const GenericEvent* FindGeneric(std::string_view name) {
  for (const GenericEvent& event : kGenericEvents) {
    if (event.name == name) return &event;
  }
  return nullptr;
}

// rNNNN: a raw hex config.
std::optional<uint64_t> ParseRaw(std::string_view name) {
  if (name.size() < 2 || name[0] != 'r' ||
      name.find_first_not_of("0123456789abcdefABCDEF", 1) != std::string_view::npos) {
    return std::nullopt;
  }
  auto value = ParseTermNumber(fmt::format("0x{}", name.substr(1)));
  return value ? std::optional(*value) : std::nullopt;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A candidate for "did you mean": compared by `key`, shown as `shown`.
struct Candidate {
  std::string key;
  std::string shown;
};

// Candidates within a small edit distance of `query`, or containing it;
// closest first, at most eight.
std::vector<std::string> CloseMatches(std::string_view query,
                                      const std::vector<Candidate>& candidates) {
  const std::string q = Lowercase(query);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const Candidate& c : candidates) {
    const std::string key = Lowercase(c.key);
    const size_t distance = EditDistance(q, key);
    if (distance <= std::max<size_t>(2, q.size() / 3) ||
        (q.size() >= 3 && key.find(q) != std::string::npos)) {
      scored.emplace_back(distance, c.shown);
    }
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> close;
  for (auto& [distance, shown] : scored) {
    if (std::find(close.begin(), close.end(), shown) == close.end()) close.push_back(shown);
    if (close.size() == 8) break;
  }
  return close;
}

std::string DidYouMean(const std::vector<std::string>& close) {
  return close.empty() ? std::string(" (sample-record --list-events shows all)")
                       : fmt::format("; did you mean: {}?", fmt::join(close, ", "));
}

bool LooksLikeModifiers(std::string_view text) {
  return !text.empty() && text.find_first_not_of(kModifierLetters) == std::string_view::npos;
}

struct Modifiers {
  bool user = false;
  bool kernel = false;
  bool hv = false;
  int precise = 0;
  bool sample_read = false;

  bool privilege_given() const { return user || kernel || hv; }
};

Result<Modifiers> ParseModifiers(std::string_view text, std::string_view event) {
  Modifiers mods;
  for (char c : text) {
    switch (c) {
      case 'u':
        mods.user = true;
        break;
      case 'k':
        mods.kernel = true;
        break;
      case 'h':
        mods.hv = true;
        break;
      case 'p':
        ++mods.precise;
        break;
      case 'S':
        mods.sample_read = true;
        break;
      default:
        return Fail(
            fmt::format("bad modifier '{}' in '{}': modifiers are u (user), k (kernel), "
                        "h (hypervisor), p/pp/ppp (precise), S (group read by its leader)",
                        c, event));
    }
  }
  if (mods.precise > 3) return Fail(fmt::format("'{}': at most ppp (precise_ip 3)", event));
  return mods;
}

// One event as split from the list, still text.
struct RawEvent {
  std::string_view text;                  // as written, without group braces
  std::string_view body;                  // before a term list ("cycles:u", "cpu")
  std::optional<std::string_view> terms;  // between the slashes
  std::string_view modifiers;             // after the closing slash (':' dropped)
  int group = -1;
  bool leader = false;
  std::string_view group_modifiers;
  std::string_view group_text;  // "{...}:mods", for messages
};

// mem:, uprobe: and uretprobe: bodies hold '/' and ':' of their own.
bool HasOwnSyntax(std::string_view text) {
  return text.starts_with("mem:") || text.starts_with("uprobe:") || text.starts_with("uretprobe:");
}

Result<RawEvent> ScanEvent(std::string_view list, size_t* pos) {
  RawEvent event;
  const size_t start = *pos;
  if (HasOwnSyntax(list.substr(start))) {
    *pos = std::min(list.find_first_of(",}", start), list.size());
    event.text = event.body = list.substr(start, *pos - start);
    return event;
  }
  size_t end = std::min(list.find_first_of("/,{}", start), list.size());
  event.body = list.substr(start, end - start);
  if (event.body.empty()) {
    return Fail(fmt::format("empty event at offset {} in '{}'", start, list));
  }
  if (end < list.size() && list[end] == '{') {
    return Fail(fmt::format("unexpected '{{' at offset {} in '{}'", end, list));
  }
  if (end < list.size() && list[end] == '/') {
    const size_t close = list.find('/', end + 1);
    if (close == std::string_view::npos) {
      return Fail(fmt::format("the term list of '{}' has no closing '/'", list.substr(start)));
    }
    event.terms = list.substr(end + 1, close - end - 1);
    size_t mods = close + 1;
    if (mods < list.size() && list[mods] == ':') ++mods;
    end = std::min(list.find_first_of(",}", mods), list.size());
    event.modifiers = list.substr(mods, end - mods);
  }
  *pos = end;
  event.text = list.substr(start, end - start);
  return event;
}

Result<std::vector<RawEvent>> SplitEventList(std::string_view list) {
  if (list.empty()) return Fail("empty event list");
  std::vector<RawEvent> events;
  int groups = 0;
  int group = -1;
  size_t group_open = 0;
  size_t group_first = 0;
  size_t pos = 0;
  while (true) {
    if (pos < list.size() && list[pos] == '{') {
      if (group >= 0) return Fail(fmt::format("groups cannot nest ('{}')", list));
      group = groups++;
      group_open = pos++;
      group_first = events.size();
    }
    auto event = ScanEvent(list, &pos);
    if (!event) return tl::unexpected(event.error());
    event->group = group;
    event->leader = group >= 0 && events.size() == group_first;
    events.push_back(*event);
    if (pos < list.size() && list[pos] == '}') {
      if (group < 0) {
        return Fail(fmt::format("unbalanced braces: the '}}' at offset {} in '{}' closes no '{{'",
                                pos, list));
      }
      ++pos;
      std::string_view mods;
      if (pos < list.size() && list[pos] == ':') {
        const size_t end = std::min(list.find(',', pos), list.size());
        mods = list.substr(pos + 1, end - pos - 1);
        pos = end;
      }
      if (pos < list.size() && list[pos] != ',') {
        return Fail(
            fmt::format("unexpected '{}' after '}}' at offset {} in '{}'", list[pos], pos, list));
      }
      for (size_t i = group_first; i < events.size(); ++i) {
        events[i].group_modifiers = mods;
        events[i].group_text = list.substr(group_open, pos - group_open);
      }
      group = -1;
    }
    if (pos == list.size()) break;
    ++pos;  // the ','
    if (pos == list.size()) return Fail(fmt::format("'{}' ends with a comma", list));
  }
  if (group >= 0) {
    return Fail(fmt::format("unbalanced braces: the '{{' at offset {} in '{}' has no '}}'",
                            group_open, list));
  }
  return events;
}

// The PMU of a PMU event, and the terms its name implies.
struct Resolved {
  const Pmu* pmu = nullptr;
  std::vector<PmuTerm> implied_terms;
  bool tracepoint = false;
};

// Resolves the events of one ParseEventList call into attrs; caches the
// PMUs and the tracefs it reads.
class Resolver {
 public:
  explicit Resolver(const EventParseOptions& options) : options_(options) {}

  Result<EventSpec> Resolve(const RawEvent& raw);

 private:
  Result<Resolved> ResolveName(std::string_view name, const RawEvent& raw, EventSpec* spec);
  Result<void> ResolveTracepoint(std::string_view subsystem, std::string_view event,
                                 EventSpec* spec);
  Result<void> ResolveBreakpoint(const RawEvent& raw, EventSpec* spec, std::string_view* mods);
  Result<void> ResolveUprobe(const RawEvent& raw, EventSpec* spec, std::string_view* mods);
  Result<void> ApplyTerms(const RawEvent& raw, Resolved resolved, EventSpec* spec);
  Result<const Pmu*> GetPmu(std::string_view name);
  const std::vector<Pmu>& AllPmus();
  bool IsEventOfSomePmu(std::string_view name);
  tl::unexpected<Error> UnknownEvent(std::string_view name, std::string_view note);

  const EventParseOptions& options_;
  std::map<std::string, Pmu, std::less<>> pmus_;
  std::optional<std::vector<Pmu>> all_pmus_;
  std::optional<Tracefs> tracefs_;
};

void ApplyModifiers(const Modifiers& mods, bool exclude_kernel_default, perf_event_attr* attr) {
  if (mods.privilege_given()) {
    // As in perf: naming any of u/k/h excludes the levels not named.
    attr->exclude_user = !mods.user;
    attr->exclude_kernel = !mods.kernel;
    attr->exclude_hv = !mods.hv;
  } else if (exclude_kernel_default) {
    attr->exclude_kernel = 1;
  }
  attr->precise_ip = static_cast<uint64_t>(mods.precise);
}

// period, freq, call-graph, name, and for PMU events config, config1,
// config2. False if `term` is none of them.
Result<bool> ApplyGenericTerm(const PmuTerm& term, bool pmu_event, EventSpec* spec) {
  const std::string& key = term.key;
  const bool numeric = key == "period" || key == "freq" ||
                       (pmu_event && (key == "config" || key == "config1" || key == "config2"));
  if (!numeric && key != "call-graph" && key != "name") return false;
  if (!term.value || term.value->empty()) return Fail(fmt::format("term '{}' needs a value", key));
  if (key == "name") {
    spec->name = *term.value;
    return true;
  }
  if (key == "call-graph") {
    if (*term.value == "fp") {
      spec->call_graph = CallGraphMode::kFramePointer;
    } else if (*term.value == "dwarf") {
      spec->call_graph = CallGraphMode::kDwarf;
    } else if (*term.value == "no") {
      spec->call_graph = CallGraphMode::kNone;
    } else {
      return Fail(fmt::format("call-graph={}: expected fp, dwarf or no", *term.value));
    }
    return true;
  }
  auto value = ParseTermNumber(*term.value);
  if (!value) return Fail(fmt::format("term '{}': {}", key, value.error().message));
  if (key == "config") {
    spec->attr.config = *value;
  } else if (key == "config1") {
    spec->attr.config1 = *value;
  } else if (key == "config2") {
    spec->attr.config2 = *value;
  } else if (*value == 0) {
    return Fail(fmt::format("{}=0: must be at least 1", key));
  } else if (key == "period") {
    spec->attr.sample_period = *value;
    spec->period_given = true;
  } else {
    spec->attr.freq = 1;
    spec->attr.sample_freq = *value;
    spec->freq_given = true;
  }
  return true;
}

std::string Abbreviated(const std::vector<std::string>& names, size_t limit) {
  if (names.size() <= limit) return fmt::format("{}", fmt::join(names, ", "));
  return fmt::format("{}, ... ({} in all)",
                     fmt::join(names.begin(), names.begin() + static_cast<ptrdiff_t>(limit), ", "),
                     names.size());
}

std::string UnknownTermMessage(const PmuTerm& term, std::string_view text, const Pmu* pmu) {
  if (pmu == nullptr) {
    return fmt::format("unknown term '{}' in '{}'; valid terms: {}", term.key, text, kGenericTerms);
  }
  if (const std::string* broken = pmu->BrokenFormat(term.key)) {
    return fmt::format("term '{}' in '{}' cannot be used: {}", term.key, text, *broken);
  }
  std::vector<std::string> valid = pmu->FormatNames();
  std::string events;
  if (!pmu->EventNames().empty()) {
    events = fmt::format("; or one of its events: {}", Abbreviated(pmu->EventNames(), 20));
  }
  return fmt::format(
      "unknown term '{}' in '{}'; PMU '{}' takes: {}{}config, config1, config2, {}{}", term.key,
      text, pmu->name(), fmt::join(valid, ", "), valid.empty() ? "" : ", ", kGenericTerms, events);
}

// The function named `symbol` in `elf`: an exact (demangled) name, else a
// name without its parameter list ("ns::Foo::bar" for "ns::Foo::bar(int)").
Result<const ElfSymbol*> FindFunction(const ElfSymbols& elf, std::string_view symbol,
                                      const std::string& path) {
  std::vector<const ElfSymbol*> matches;
  for (const ElfSymbol& s : elf.symbols()) {
    if (s.name == symbol) matches.push_back(&s);
  }
  if (matches.empty()) {
    for (const ElfSymbol& s : elf.symbols()) {
      if (std::string_view(s.name).substr(0, s.name.find('(')) == symbol) matches.push_back(&s);
    }
  }
  if (matches.size() == 1) return matches[0];
  if (matches.empty()) {
    std::vector<Candidate> candidates;
    for (const ElfSymbol& s : elf.symbols()) {
      candidates.push_back({s.name.substr(0, s.name.find('(')), s.name});
    }
    const std::vector<std::string> close = CloseMatches(symbol, candidates);
    return Fail(fmt::format(
        "no function '{}' in {}{}", symbol, path,
        close.empty() ? "" : fmt::format("; did you mean: {}?", fmt::join(close, ", "))));
  }
  std::vector<std::string> names;
  for (const ElfSymbol* s : matches) names.push_back(s->name);
  return Fail(fmt::format("'{}' is ambiguous in {}: {}; give the full name or a 0x address", symbol,
                          path, Abbreviated(names, 8)));
}

Result<const Pmu*> Resolver::GetPmu(std::string_view name) {
  if (const auto it = pmus_.find(name); it != pmus_.end()) return &it->second;
  auto pmu = Pmu::Load(options_.sysfs_root, name);
  if (!pmu) return tl::unexpected(pmu.error());
  return &pmus_.emplace(std::string(name), std::move(*pmu)).first->second;
}

const std::vector<Pmu>& Resolver::AllPmus() {
  if (!all_pmus_) {
    all_pmus_.emplace();
    for (const std::string& name : Pmu::List(options_.sysfs_root)) {
      if (auto pmu = Pmu::Load(options_.sysfs_root, name)) all_pmus_->push_back(std::move(*pmu));
    }
  }
  return *all_pmus_;
}

tl::unexpected<Error> Resolver::UnknownEvent(std::string_view name, std::string_view note) {
  std::vector<Candidate> candidates;
  for (const GenericEvent& e : kGenericEvents) {
    candidates.push_back({std::string(e.name), std::string(e.name)});
  }
  for (const std::string& cache : CacheEventNames()) candidates.push_back({cache, cache});
  for (const Pmu& pmu : AllPmus()) {
    candidates.push_back({pmu.name(), pmu.name() + "//"});
    for (const std::string& event : pmu.EventNames()) {
      candidates.push_back({event, fmt::format("{}/{}/", pmu.name(), event)});
    }
  }
  return Fail(fmt::format("unknown event '{}'{}{}", name, note,
                          DidYouMean(CloseMatches(name, candidates))));
}

bool Resolver::IsEventOfSomePmu(std::string_view name) {
  return std::any_of(AllPmus().begin(), AllPmus().end(),
                     [&](const Pmu& pmu) { return pmu.FindEvent(name) != nullptr; });
}

bool IsPlainEvent(std::string_view name) {
  return FindGeneric(name) != nullptr || ParseCacheEvent(name) || ParseRaw(name);
}

Result<EventSpec> Resolver::Resolve(const RawEvent& raw) {
  EventSpec spec;
  spec.name = std::string(raw.text);
  std::string_view mods = raw.modifiers;
  Resolved resolved;
  if (raw.body.starts_with("mem:")) {
    if (auto done = ResolveBreakpoint(raw, &spec, &mods); !done) {
      return tl::unexpected(done.error());
    }
  } else if (HasOwnSyntax(raw.body)) {
    if (auto done = ResolveUprobe(raw, &spec, &mods); !done) {
      return tl::unexpected(done.error());
    }
  } else {
    std::vector<std::string_view> parts;
    for (size_t start = 0;;) {
      const size_t colon = raw.body.find(':', start);
      parts.push_back(raw.body.substr(start, colon - start));
      if (colon == std::string_view::npos) break;
      start = colon + 1;
    }
    if (parts.size() > 3) return Fail(fmt::format("'{}': too many ':'", raw.text));
    // "cycles:u" is cycles with modifier u; "sched:sched_switch" a
    // tracepoint; "sched:sched_switch:k" a tracepoint with modifier k.
    const bool tracepoint =
        parts.size() == 3 || (parts.size() == 2 && !IsPlainEvent(parts[0]) &&
                              !(LooksLikeModifiers(parts[1]) && IsEventOfSomePmu(parts[0])));
    if ((parts.size() == 3 || (parts.size() == 2 && !tracepoint)) && !raw.modifiers.empty()) {
      return Fail(fmt::format("'{}' has two modifier lists", raw.text));
    }
    if (tracepoint) {
      if (parts.size() == 3) mods = parts[2];
      auto done = ResolveTracepoint(parts[0], parts[1], &spec);
      if (!done) return tl::unexpected(done.error());
      resolved.tracepoint = true;
    } else {
      if (parts.size() == 2) mods = parts[1];
      auto name = ResolveName(parts[0], raw, &spec);
      if (!name) return tl::unexpected(name.error());
      resolved = std::move(*name);
    }
  }
  const bool tracepoint = resolved.tracepoint;
  if (auto done = ApplyTerms(raw, std::move(resolved), &spec); !done) {
    return tl::unexpected(done.error());
  }
  auto event_mods = ParseModifiers(mods, raw.text);
  if (!event_mods) return tl::unexpected(event_mods.error());
  if (event_mods->sample_read) {
    return Fail(fmt::format("'{}': the S modifier applies to groups, as in {{a,b}}:S", raw.text));
  }
  auto group_mods = ParseModifiers(raw.group_modifiers, raw.group_text);
  if (!group_mods) return tl::unexpected(group_mods.error());
  Modifiers merged = *event_mods;
  merged.user |= group_mods->user;
  merged.kernel |= group_mods->kernel;
  merged.hv |= group_mods->hv;
  merged.precise = std::max(merged.precise, group_mods->precise);
  ApplyModifiers(merged, options_.exclude_kernel_default && !tracepoint, &spec.attr);
  spec.group_index = raw.group;
  spec.group_leader = raw.leader;
  spec.sample_read = group_mods->sample_read;
  return spec;
}

Result<Resolved> Resolver::ResolveName(std::string_view name, const RawEvent& raw,
                                       EventSpec* spec) {
  Resolved resolved;
  // Generic and cache events show their canonical name, then what followed.
  const std::string_view rest = raw.text.substr(name.size());
  if (const GenericEvent* generic = FindGeneric(name)) {
    spec->attr.type = generic->type;
    spec->attr.config = generic->config;
    spec->name = fmt::format("{}{}", generic->canonical, rest);
    return resolved;
  }
  if (auto cache = ParseCacheEvent(name)) {
    spec->attr.type = PERF_TYPE_HW_CACHE;
    spec->attr.config = cache->first;
    spec->name = fmt::format("{}{}", cache->second, rest);
    return resolved;
  }
  if (auto config = ParseRaw(name)) {
    spec->attr.type = PERF_TYPE_RAW;
    spec->attr.config = *config;
    return resolved;
  }
  auto pmu = GetPmu(name);
  if (pmu) {
    if (!raw.terms) {
      return Fail(fmt::format("'{}' is a PMU: write {}/EVENT/ or {}/TERM=VALUE,.../ (events: {})",
                              name, name, name, Abbreviated((*pmu)->EventNames(), 20)));
    }
    spec->attr.type = (*pmu)->type();
    resolved.pmu = *pmu;
    return resolved;
  }
  if (pmu.error().sys_errno != ENOENT) return tl::unexpected(pmu.error());
  // A PMU's named event without the PMU: "tsc" for msr/tsc/, as perf allows.
  std::vector<const Pmu*> owners;
  for (const Pmu& candidate : AllPmus()) {
    if (candidate.FindEvent(name) != nullptr) owners.push_back(&candidate);
  }
  if (owners.size() == 1) {
    spec->attr.type = owners[0]->type();
    resolved.pmu = owners[0];
    resolved.implied_terms.push_back(PmuTerm{std::string(name), std::nullopt});
    return resolved;
  }
  if (owners.size() > 1) {
    std::vector<std::string> choices;
    for (const Pmu* owner : owners) choices.push_back(fmt::format("{}/{}/", owner->name(), name));
    return Fail(fmt::format("'{}' is an event of several PMUs; pick one: {}", name,
                            fmt::join(choices, ", ")));
  }
  return UnknownEvent(name, raw.terms ? fmt::format(" (nor a PMU in {}/bus/event_source/devices)",
                                                    options_.sysfs_root)
                                      : std::string());
}

Result<void> Resolver::ResolveTracepoint(std::string_view subsystem, std::string_view event,
                                         EventSpec* spec) {
  const std::string full = fmt::format("{}:{}", subsystem, event);
  if (full.find_first_of("*?[") != std::string::npos) {
    return Fail(
        fmt::format("'{}': -e takes no globs; --list-events 'GLOB' shows what matches", full));
  }
  if (!tracefs_) {
    auto located = Tracefs::Locate(options_.tracefs_root);
    if (!located) {
      if (LooksLikeModifiers(event)) {
        return UnknownEvent(subsystem, fmt::format(" (nor is '{}' a tracepoint: {})", full,
                                                   located.error().message));
      }
      return Fail(fmt::format("tracepoint '{}': {}", full, located.error().message),
                  located.error().sys_errno);
    }
    tracefs_ = std::move(*located);
  }
  auto id = tracefs_->TracepointId(subsystem, event);
  if (!id) {
    if (id.error().sys_errno != ENOENT) return tl::unexpected(id.error());
    if (LooksLikeModifiers(event)) {
      return UnknownEvent(subsystem, fmt::format(" (and no tracepoint '{}')", full));
    }
    std::vector<Candidate> candidates;
    for (std::string& name : tracefs_->List("*")) candidates.push_back({name, name});
    return Fail(id.error().message + DidYouMean(CloseMatches(full, candidates)), ENOENT);
  }
  spec->attr.type = PERF_TYPE_TRACEPOINT;
  spec->attr.config = *id;
  return {};
}

Result<void> Resolver::ResolveBreakpoint(const RawEvent& raw, EventSpec* spec,
                                         std::string_view* mods) {
  std::string_view rest = raw.body.substr(std::string_view("mem:").size());
  const size_t address_end = std::min(rest.find_first_of("/:"), rest.size());
  auto address = ParseTermNumber(rest.substr(0, address_end));
  if (!address) {
    return Fail(fmt::format("bad breakpoint address '{}' in '{}': {}", rest.substr(0, address_end),
                            raw.text, address.error().message));
  }
  rest.remove_prefix(address_end);
  std::optional<uint64_t> length;
  if (rest.starts_with('/')) {
    const size_t length_end = std::min(rest.find(':'), rest.size());
    auto parsed = ParseTermNumber(rest.substr(1, length_end - 1));
    if (!parsed || (*parsed != 1 && *parsed != 2 && *parsed != 4 && *parsed != 8)) {
      return Fail(fmt::format("bad breakpoint length '{}' in '{}': must be 1, 2, 4 or 8",
                              rest.substr(1, length_end - 1), raw.text));
    }
    length = *parsed;
    rest.remove_prefix(length_end);
  }
  std::string_view access = "rw";
  if (rest.starts_with(':')) {
    const std::string_view word = rest.substr(1, rest.find(':', 1) - 1);
    if (!word.empty() && word.find_first_not_of("rwx") == std::string_view::npos) {
      access = word;
      rest.remove_prefix(1 + word.size());
    }
  }
  if (rest.starts_with(':')) {
    *mods = rest.substr(1);
    rest = {};
  }
  if (!rest.empty()) {
    return Fail(
        fmt::format("unexpected '{}' in '{}': expected mem:ADDR[/LEN][:rwx]", rest, raw.text));
  }
  uint32_t type = 0;
  for (char c : access) {
    const uint32_t bit = c == 'r' ? HW_BREAKPOINT_R : c == 'w' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;
    if (type & bit) return Fail(fmt::format("'{}': '{}' given twice", raw.text, c));
    type |= bit;
  }
  if ((type & HW_BREAKPOINT_X) && (type & HW_BREAKPOINT_RW)) {
    return Fail(fmt::format("'{}': x cannot be combined with r or w", raw.text));
  }
  spec->attr.type = PERF_TYPE_BREAKPOINT;
  spec->attr.bp_type = type;
  spec->attr.bp_addr = *address;
  // The kernel wants sizeof(long) for execute breakpoints.
  spec->attr.bp_len =
      length.value_or(type == HW_BREAKPOINT_X ? sizeof(long) : uint64_t{HW_BREAKPOINT_LEN_4});
  return {};
}

Result<void> Resolver::ResolveUprobe(const RawEvent& raw, EventSpec* spec, std::string_view* mods) {
  const bool retprobe = raw.body.starts_with("uretprobe:");
  std::string_view rest = raw.body.substr(raw.body.find(':') + 1);
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Fail(fmt::format("'{}': expected {}:PATH:SYMBOL[+OFFSET]", raw.text,
                            retprobe ? "uretprobe" : "uprobe"));
  }
  const std::string path(rest.substr(0, colon));
  std::string_view symbol = rest.substr(colon + 1);
  // Trailing ":mods", but not the last part of a C++ name ("ns::f").
  if (const size_t last = symbol.rfind(':'); last != std::string_view::npos && last > 0 &&
                                             symbol[last - 1] != ':' &&
                                             LooksLikeModifiers(symbol.substr(last + 1))) {
    *mods = symbol.substr(last + 1);
    symbol = symbol.substr(0, last);
  }
  uint64_t offset = 0;
  if (const size_t plus = symbol.rfind('+'); plus != std::string_view::npos) {
    if (auto parsed = ParseTermNumber(symbol.substr(plus + 1))) {
      offset = *parsed;
      symbol = symbol.substr(0, plus);
    }
  }
  if (symbol.empty()) return Fail(fmt::format("'{}': no symbol after the path", raw.text));
  std::error_code ec;
  const std::string absolute = fs::canonical(path, ec).string();
  if (ec) return Fail(fmt::format("'{}': cannot find {}: {}", raw.text, path, ec.message()));
  auto elf = ElfSymbols::Load(absolute);
  if (!elf) return Fail(fmt::format("'{}': {}", raw.text, elf.error().message));
  uint64_t vaddr = 0;
  if (symbol.starts_with("0x")) {
    auto parsed = ParseTermNumber(symbol);
    if (!parsed) return Fail(fmt::format("'{}': {}", raw.text, parsed.error().message));
    vaddr = *parsed;
  } else {
    auto function = FindFunction(*elf, symbol, absolute);
    if (!function) return Fail(fmt::format("'{}': {}", raw.text, function.error().message));
    if ((*function)->size != 0 && offset >= (*function)->size) {
      return Fail(fmt::format("'{}': offset {:#x} is past the end of {} ({} bytes)", raw.text,
                              offset, (*function)->name, (*function)->size));
    }
    vaddr = (*function)->start;
  }
  const std::optional<uint64_t> file_offset = elf->VaddrToFileOffset(vaddr + offset);
  if (!file_offset) {
    return Fail(fmt::format("'{}': address {:#x} is not in the file's loaded contents", raw.text,
                            vaddr + offset));
  }
  auto pmu = GetPmu("uprobe");
  if (!pmu) {
    return Fail(
        fmt::format("'{}': {}; uprobes through perf_event_open need Linux 4.17 or later "
                    "with CONFIG_UPROBE_EVENTS",
                    raw.text, pmu.error().message));
  }
  spec->attr.type = (*pmu)->type();
  if (retprobe) {
    const PmuFormat* bit = (*pmu)->FindFormat("retprobe");
    if (bit == nullptr)
      return Fail(fmt::format("'{}': the uprobe PMU has no format/retprobe", raw.text));
    if (auto applied = bit->Apply(1, &spec->attr); !applied) return applied;
  }
  spec->attr.config2 = *file_offset;
  spec->uprobe_path = absolute;
  return {};
}

Result<void> Resolver::ApplyTerms(const RawEvent& raw, Resolved resolved, EventSpec* spec) {
  std::vector<PmuTerm> terms = std::move(resolved.implied_terms);
  if (raw.terms) {
    auto parsed = ParsePmuTerms(*raw.terms);
    if (!parsed) return Fail(fmt::format("'{}': {}", raw.text, parsed.error().message));
    terms.insert(terms.end(), parsed->begin(), parsed->end());
  }
  const Pmu* pmu = resolved.pmu;
  std::vector<std::string> required;
  if (pmu != nullptr) {
    auto expanded = pmu->ExpandEvents(&terms);
    if (!expanded) return Fail(fmt::format("'{}': {}", raw.text, expanded.error().message));
    required = std::move(*expanded);
  }
  std::set<std::string, std::less<>> given;
  for (const PmuTerm& term : terms) {
    given.insert(term.key);
    auto generic = ApplyGenericTerm(term, pmu != nullptr, spec);
    if (!generic) return Fail(fmt::format("'{}': {}", raw.text, generic.error().message));
    if (*generic) continue;
    const PmuFormat* format = pmu != nullptr ? pmu->FindFormat(term.key) : nullptr;
    if (format == nullptr) return Fail(UnknownTermMessage(term, raw.text, pmu));
    uint64_t value = 1;
    if (term.value) {
      auto parsed = ParseTermNumber(*term.value);
      if (!parsed) {
        return Fail(fmt::format("'{}': term '{}': {}", raw.text, term.key, parsed.error().message));
      }
      value = *parsed;
    }
    if (auto applied = format->Apply(value, &spec->attr); !applied) {
      return Fail(fmt::format("'{}': {}", raw.text, applied.error().message));
    }
  }
  for (const std::string& key : required) {
    if (!given.contains(key)) {
      return Fail(fmt::format("'{}': the event needs a value for term '{}' (add {}=N)", raw.text,
                              key, key));
    }
  }
  if (spec->period_given && spec->freq_given) {
    return Fail(fmt::format("'{}': give period or freq, not both", raw.text));
  }
  return {};
}

}  // namespace

Result<std::vector<EventSpec>> ParseEventList(std::string_view text,
                                              const EventParseOptions& options) {
  auto raw_events = SplitEventList(text);
  if (!raw_events) return tl::unexpected(raw_events.error());
  Resolver resolver(options);
  std::vector<EventSpec> specs;
  for (const RawEvent& raw : *raw_events) {
    auto spec = resolver.Resolve(raw);
    if (!spec) return tl::unexpected(spec.error());
    specs.push_back(std::move(*spec));
  }
  return specs;
}

Result<std::vector<std::string>> ListEvents(const EventParseOptions& options,
                                            std::string_view tracepoint_glob) {
  std::vector<std::string> names;
  for (uint32_t type : {kSw, kHw}) {
    for (const GenericEvent& event : kGenericEvents) {
      if (event.type == type && event.name == event.canonical) names.emplace_back(event.name);
    }
  }
  for (std::string& cache : CacheEventNames()) names.push_back(std::move(cache));
  for (const std::string& name : Pmu::List(options.sysfs_root)) {
    names.push_back(name + "//");
    if (auto pmu = Pmu::Load(options.sysfs_root, name)) {
      for (const std::string& event : pmu->EventNames()) {
        names.push_back(fmt::format("{}/{}/", name, event));
      }
    }
  }
  if (!tracepoint_glob.empty()) {
    auto tracefs = Tracefs::Locate(options.tracefs_root);
    if (!tracefs) return tl::unexpected(tracefs.error());
    for (std::string& name : tracefs->List(tracepoint_glob)) names.push_back(std::move(name));
  }
  return names;
}

}  // namespace sample
