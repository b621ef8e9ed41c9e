// ParseEventList and ListEvents: each event split from the list
// (libsample/events/event_list_syntax.h) is resolved to an attr here, by name
// (libsample/events/event_names.h), as a sysfs PMU with terms, as a tracepoint, or
// as a breakpoint or uprobe (libsample/events/probe_events.h).
#include "libsample/events/event_spec.h"

#include <fnmatch.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "libsample/events/event_list_syntax.h"
#include "libsample/events/event_names.h"
#include "libsample/events/event_toggles.h"
#include "libsample/events/name_suggestions.h"
#include "libsample/events/pmu_format.h"
#include "libsample/events/probe_events.h"
#include "libsample/events/tracefs.h"

namespace sample {
namespace {

constexpr std::string_view kGenericTerms =
    "period, freq, call-graph, stack-size, name, on, off, toggle, start";

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
  Result<void> ResolveUprobe(const RawEvent& raw, EventSpec* spec, std::string_view* mods);
  Result<void> ResolveKprobe(const RawEvent& raw, EventSpec* spec, std::string_view* mods);
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

// period, freq, call-graph, stack-size, name, and for PMU events config,
// config1, config2. False if `term` is none of them.
Result<bool> ApplyGenericTerm(const PmuTerm& term, bool pmu_event, EventSpec* spec) {
  const std::string& key = term.key;
  const bool numeric = key == "period" || key == "freq" || key == "stack-size" ||
                       (pmu_event && (key == "config" || key == "config1" || key == "config2"));
  const bool toggle = key == "on" || key == "off" || key == "toggle" || key == "start";
  if (!numeric && !toggle && key != "call-graph" && key != "name") return false;
  if (!term.value || term.value->empty()) return Fail(fmt::format("term '{}' needs a value", key));
  if (key == "name") {
    spec->name = *term.value;
    return true;
  }
  if (key == "on" || key == "off") {
    spec->toggle_names.emplace_back(key == "on", *term.value);
    return true;
  }
  if (key == "toggle") {
    if (*term.value != "thread" && *term.value != "cpu") {
      return Fail(fmt::format("toggle={}: expected thread (the trigger switches the event for "
                              "the thread it fired in) or cpu (for its CPU)",
                              *term.value));
    }
    spec->toggle_scope = *term.value == "cpu" ? ToggleScope::kCpu : ToggleScope::kThread;
    spec->toggle_scope_given = true;
    return true;
  }
  if (key == "start") {
    if (*term.value != "on" && *term.value != "off") {
      return Fail(fmt::format("start={}: expected on or off", *term.value));
    }
    spec->starts_on = *term.value == "on";
    spec->start_given = true;
    return true;
  }
  if (key == "call-graph") {
    if (*term.value == "fp") {
      spec->chain_capture = ChainCapture::kFramePointer;
    } else if (*term.value == "dwarf") {
      spec->chain_capture = ChainCapture::kDwarf;
    } else if (*term.value == "no") {
      spec->chain_capture = ChainCapture::kNone;
    } else {
      return Fail(fmt::format("call-graph={}: expected fp, dwarf or no", *term.value));
    }
    return true;
  }
  auto value = ParseTermNumber(*term.value);
  if (!value) return Fail(fmt::format("term '{}': {}", key, value.error().message));
  if (key == "stack-size") {
    TRY_ASSIGN(auto size, CheckStackSize(*value));
    spec->stack_size = size;
  } else if (key == "config") {
    spec->attr.config = *value;
  } else if (key == "config1") {
    spec->attr.config1 = *value;
  } else if (key == "config2") {
    spec->attr.config2 = *value;
  } else if (*value == 0) {
    return Fail(fmt::format("{}=0: must be at least 1", key));
  } else if (key == "period") {
    // The kernel refuses a period with the top bit set (EINVAL).
    if (*value > static_cast<uint64_t>(INT64_MAX)) {
      return Fail(fmt::format("period={}: at most {}", *value, INT64_MAX));
    }
    spec->attr.sample_period = *value;
    spec->period_given = true;
  } else {
    spec->attr.freq = 1;
    spec->attr.sample_freq = *value;
    spec->freq_given = true;
  }
  return true;
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

Result<const Pmu*> Resolver::GetPmu(std::string_view name) {
  if (const auto it = pmus_.find(name); it != pmus_.end()) return &it->second;
  TRY_ASSIGN(auto pmu, Pmu::Load(options_.sysfs_root, name));
  return &pmus_.emplace(std::string(name), std::move(pmu)).first->second;
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
  std::vector<NameCandidate> candidates;
  for (const GenericEvent& e : GenericEvents()) {
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

// The kernel's dynamic probe PMUs: each event is one probed place.
bool IsProbePmu(std::string_view name) { return name == "uprobe" || name == "kprobe"; }

// PMUs whose every event needs a parameter (a tracepoint id, an address, a
// path or function name the kernel takes as a pointer): "pmu//" alone
// fails with EINVAL.
bool NeedsParameter(const Pmu& pmu) {
  return pmu.type() == PERF_TYPE_TRACEPOINT || pmu.type() == PERF_TYPE_BREAKPOINT ||
         IsProbePmu(pmu.name());
}

bool IsPlainEvent(std::string_view name) {
  return FindGenericEvent(name) != nullptr || ParseCacheEvent(name) || ParseRawEvent(name);
}

Result<EventSpec> Resolver::Resolve(const RawEvent& raw) {
  EventSpec spec;
  spec.name = std::string(raw.text);
  std::string_view mods = raw.modifiers;
  Resolved resolved;
  if (raw.body.starts_with("mem:")) {
    TRY(ParseBreakpoint(raw, &spec, &mods));
  } else if (raw.body.starts_with("kprobe:") || raw.body.starts_with("kretprobe:")) {
    TRY(ResolveKprobe(raw, &spec, &mods));
  } else if (HasOwnSyntax(raw.body)) {
    TRY(ResolveUprobe(raw, &spec, &mods));
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
      TRY(ResolveTracepoint(parts[0], parts[1], &spec));
      resolved.tracepoint = true;
    } else {
      if (parts.size() == 2) mods = parts[1];
      TRY_ASSIGN(auto name, ResolveName(parts[0], raw, &spec));
      resolved = std::move(name);
    }
  }
  const bool tracepoint = resolved.tracepoint;
  // Also tracepoint/config=N/ and the probe PMUs written with terms.
  spec.every_hit = spec.attr.type == PERF_TYPE_TRACEPOINT ||
                   spec.attr.type == PERF_TYPE_BREAKPOINT || spec.config1_string() != nullptr ||
                   (resolved.pmu != nullptr && IsProbePmu(resolved.pmu->name()));
  TRY(ApplyTerms(raw, std::move(resolved), &spec));
  TRY_ASSIGN(auto event_mods, ParseModifiers(mods, raw.text));
  if (event_mods.sample_read) {
    return Fail(fmt::format("'{}': the S modifier applies to groups, as in {{a,b}}:S", raw.text));
  }
  TRY_ASSIGN(auto group_mods, ParseModifiers(raw.group_modifiers, raw.group_text));
  Modifiers merged = event_mods;
  merged.user |= group_mods.user;
  merged.kernel |= group_mods.kernel;
  merged.hv |= group_mods.hv;
  merged.precise = std::max(merged.precise, group_mods.precise);
  ApplyModifiers(merged, options_.exclude_kernel_default && !tracepoint, &spec.attr);
  spec.kernel_excluded_by_default =
      options_.exclude_kernel_default && !tracepoint && !merged.privilege_given();
  spec.group_index = raw.group;
  spec.group_leader = raw.leader;
  spec.sample_read = group_mods.sample_read;
  return spec;
}

Result<Resolved> Resolver::ResolveName(std::string_view name, const RawEvent& raw,
                                       EventSpec* spec) {
  Resolved resolved;
  // Generic and cache events show their canonical name, then what followed.
  const std::string_view rest = raw.text.substr(name.size());
  if (const GenericEvent* generic = FindGenericEvent(name)) {
    spec->attr.type = generic->type;
    spec->attr.config = generic->config;
    spec->name = fmt::format("{}{}", generic->canonical, rest);
    return resolved;
  }
  if (auto cache = ParseCacheEvent(name)) {
    spec->attr.type = PERF_TYPE_HW_CACHE;
    spec->attr.config = cache->config;
    spec->name = fmt::format("{}{}", cache->name, rest);
    return resolved;
  }
  if (auto config = ParseRawEvent(name)) {
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
    std::vector<NameCandidate> candidates;
    for (std::string& name : tracefs_->List("*")) candidates.push_back({name, name});
    return Fail(id.error().message + DidYouMean(CloseMatches(full, candidates)), ENOENT);
  }
  spec->attr.type = PERF_TYPE_TRACEPOINT;
  spec->attr.config = *id;
  spec->trace_format = tracefs_->TracepointFormat(subsystem, event);
  return {};
}

Result<void> Resolver::ResolveUprobe(const RawEvent& raw, EventSpec* spec, std::string_view* mods) {
  TRY_ASSIGN(auto target, ParseUprobe(raw, mods));
  auto pmu = GetPmu("uprobe");
  if (!pmu) {
    return Fail(
        fmt::format("'{}': {}; uprobes through perf_event_open need Linux 4.17 or later "
                    "with CONFIG_UPROBE_EVENTS",
                    raw.text, pmu.error().message));
  }
  return ApplyUprobe(target, **pmu, raw.text, spec);
}

Result<void> Resolver::ResolveKprobe(const RawEvent& raw, EventSpec* spec, std::string_view* mods) {
  TRY_ASSIGN(auto target, ParseKprobe(raw, mods));
  auto pmu = GetPmu("kprobe");
  if (!pmu) {
    return Fail(fmt::format("'{}': {}; kprobes through perf_event_open need Linux 4.17 or later "
                            "with CONFIG_KPROBE_EVENTS",
                            raw.text, pmu.error().message),
                pmu.error().sys_errno);
  }
  return ApplyKprobe(target, **pmu, raw.text, spec);
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
  TRY_ASSIGN(auto raw_events, SplitEventList(text));
  Resolver resolver(options);
  std::vector<EventSpec> specs;
  for (const RawEvent& raw : raw_events) {
    TRY_ASSIGN(auto spec, resolver.Resolve(raw));
    specs.push_back(std::move(spec));
  }
  TRY(ResolveToggles(&specs));
  return specs;
}

static Result<void> CheckGlob(std::string_view glob) {
  // fnmatch takes an unclosed '[' or a trailing '\\' literally and matches
  // nothing, so a typo would list nothing without a word.
  for (size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] == '\\') {
      if (++i == glob.size()) return Fail(fmt::format("'{}': the pattern ends in '\\'", glob));
      continue;
    }
    if (glob[i] != '[') continue;
    size_t j = i + 1;
    if (j < glob.size() && (glob[j] == '!' || glob[j] == '^')) ++j;
    if (j < glob.size() && glob[j] == ']') ++j;  // a leading ']' is a member
    while (j < glob.size() && glob[j] != ']') ++j;
    if (j == glob.size()) {
      return Fail(fmt::format("'{}': the '[' at {} is never closed", glob, i + 1));
    }
    i = j;
  }
  return {};
}

Result<std::vector<std::string>> ListEvents(const EventParseOptions& options,
                                            std::string_view tracepoint_glob) {
  if (!tracepoint_glob.empty()) TRY(CheckGlob(tracepoint_glob));
  std::vector<std::string> names;
  for (uint32_t type : {PERF_TYPE_SOFTWARE, PERF_TYPE_HARDWARE}) {
    for (const GenericEvent& event : GenericEvents()) {
      if (event.type == type && event.name == event.canonical) names.emplace_back(event.name);
    }
  }
  for (std::string& cache : CacheEventNames()) names.push_back(std::move(cache));
  for (const std::string& name : Pmu::List(options.sysfs_root)) {
    auto pmu = Pmu::Load(options.sysfs_root, name);
    if (!pmu) continue;  // -e could not use it either
    if (!NeedsParameter(*pmu)) names.push_back(name + "//");
    for (const std::string& event : pmu->EventNames()) {
      names.push_back(fmt::format("{}/{}/", name, event));
    }
  }
  if (!tracepoint_glob.empty()) {
    // With a pattern, only what it matches, of every kind (as perf list).
    const std::string pattern(tracepoint_glob);
    std::erase_if(names, [&](const std::string& name) {
      return fnmatch(pattern.c_str(), name.c_str(), 0) != 0;
    });
    auto tracefs = Tracefs::Locate(options.tracefs_root);
    // Without tracefs, what else matched is still an answer.
    if (!tracefs && names.empty()) return tl::unexpected(tracefs.error());
    if (tracefs) {
      for (std::string& name : tracefs->List(tracepoint_glob)) names.push_back(std::move(name));
    }
  }
  return names;
}

std::vector<EventForm> ParametrizedEventForms(const EventParseOptions& options) {
  const auto has_pmu = [&](std::string_view name) {
    return Pmu::Load(options.sysfs_root, name).has_value();
  };
  std::vector<EventForm> forms;
  if (has_pmu("tracepoint")) {
    forms.push_back({"SUBSYSTEM:EVENT", "tracepoint; --list-events 'GLOB' lists them ('sched:*')"});
  }
  if (has_pmu("breakpoint")) {
    forms.push_back({"mem:ADDR[/LEN][:rwx]",
                     "hardware breakpoint on an address (LEN 1, 2, 4 or 8; default rw)"});
  }
  if (auto uprobe = Pmu::Load(options.sysfs_root, "uprobe")) {
    forms.push_back({"uprobe:PATH:SYMBOL[+OFFSET]",
                     "user-space probe on a function of a binary (or a 0x address)"});
    if (uprobe->FindFormat("retprobe") != nullptr) {
      forms.push_back({"uretprobe:PATH:SYMBOL", "user-space probe on a function's returns"});
    }
  }
  if (auto kprobe = Pmu::Load(options.sysfs_root, "kprobe")) {
    forms.push_back({"kprobe:FUNCTION[+OFFSET]",
                     "kernel probe on a function (as /proc/kallsyms names it)"});
    if (kprobe->FindFormat("retprobe") != nullptr) {
      forms.push_back({"kretprobe:FUNCTION", "kernel probe on a function's returns"});
    }
  }
  return forms;
}

}  // namespace sample
