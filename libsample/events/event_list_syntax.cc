#include "libsample/events/event_list_syntax.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

namespace sample {
namespace {

constexpr std::string_view kModifierLetters = "ukhpS";

// The `/terms/` list whose opening '/' is at `open` and the modifiers
// after it; returns where the event ends (a ',', a '}' or the end).
Result<size_t> ScanTermList(std::string_view list, size_t start, size_t open, RawEvent* event) {
  const size_t close = list.find('/', open + 1);
  if (close == std::string_view::npos) {
    return Fail(fmt::format("the term list of '{}' has no closing '/'", list.substr(start)));
  }
  event->terms = list.substr(open + 1, close - open - 1);
  size_t mods = close + 1;
  if (mods < list.size() && list[mods] == ':') ++mods;
  const size_t end = std::min(list.find_first_of(",}", mods), list.size());
  event->modifiers = list.substr(mods, end - mods);
  return end;
}

Result<RawEvent> ScanEvent(std::string_view list, size_t* pos) {
  RawEvent event;
  const size_t start = *pos;
  size_t end = 0;
  if (HasOwnSyntax(list.substr(start))) {
    end = std::min(list.find_first_of(",}", start), list.size());
    // A probe may take a term list after its symbol
    // (`uprobe:./app:f/on=cpu-clock,toggle=thread/`): the path has '/' of
    // its own, the symbol none, and the terms may hold commas.
    const size_t symbol = ProbeSymbolStart(list.substr(start, end - start));
    const size_t open =
        symbol == std::string_view::npos ? std::string_view::npos : list.find('/', start + symbol);
    if (open == std::string_view::npos || open >= end) {
      event.body = list.substr(start, end - start);
    } else {
      event.body = list.substr(start, open - start);
      TRY_ASSIGN(end, ScanTermList(list, start, open, &event));
    }
  } else {
    end = std::min(list.find_first_of("/,{}", start), list.size());
    event.body = list.substr(start, end - start);
    if (event.body.empty()) {
      return Fail(fmt::format("empty event at offset {} in '{}'", start, list));
    }
    if (end < list.size() && list[end] == '{') {
      return Fail(fmt::format("unexpected '{{' at offset {} in '{}'", end, list));
    }
    if (end < list.size() && list[end] == '/') {
      TRY_ASSIGN(end, ScanTermList(list, start, end, &event));
    }
  }
  *pos = end;
  event.text = list.substr(start, end - start);
  return event;
}

}  // namespace

size_t ProbeSymbolStart(std::string_view text) {
  // uprobe:PATH:SYMBOL (the second ':'), kprobe:SYMBOL (the first).
  const bool user = text.starts_with("uprobe:") || text.starts_with("uretprobe:");
  const bool kernel = text.starts_with("kprobe:") || text.starts_with("kretprobe:");
  if (!user && !kernel) return std::string_view::npos;
  size_t colon = text.find(':');
  if (user) colon = text.find(':', colon + 1);
  return colon == std::string_view::npos ? colon : colon + 1;
}

bool HasOwnSyntax(std::string_view text) {
  return text.starts_with("mem:") || text.starts_with("uprobe:") ||
         text.starts_with("uretprobe:") || text.starts_with("kprobe:") ||
         text.starts_with("kretprobe:");
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
    TRY_ASSIGN(auto event, ScanEvent(list, &pos));
    event.group = group;
    event.leader = group >= 0 && events.size() == group_first;
    events.push_back(event);
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

bool LooksLikeModifiers(std::string_view text) {
  return !text.empty() && text.find_first_not_of(kModifierLetters) == std::string_view::npos;
}

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

}  // namespace sample
