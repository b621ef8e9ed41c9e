// The text of a `-e` list taken apart, before any name is looked up: the
// comma-separated events, `{...}` groups and their `}:mods`, each event's
// `/term,.../` list and the modifiers after it, and what the u/k/h/p/S
// modifier letters mean for perf_event_attr. mem:, uprobe: and uretprobe:
// events keep their own '/' and ':' (libsample/events/probe_events.h reads them).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "libsample/result.h"

namespace sample {

// One event as split from the list, still text. The views point into the
// list given to SplitEventList.
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

// mem:, uprobe:, uretprobe:, kprobe: and kretprobe: bodies hold '/' and
// ':' of their own.
bool HasOwnSyntax(std::string_view text);

// Where the symbol of a probe event (`uprobe:PATH:SYMBOL`,
// `kprobe:SYMBOL`) starts in `text`; npos for other events. A '/' after it
// opens the event's term list.
size_t ProbeSymbolStart(std::string_view text);

// Splits a `-e` list into its events, in order, with their groups; an
// error names what is malformed (braces, empty events, an unclosed term
// list) and where.
Result<std::vector<RawEvent>> SplitEventList(std::string_view list);

// True if `text` is non-empty and all modifier letters, so that "x:u"
// reads as event x with modifier u.
bool LooksLikeModifiers(std::string_view text);

// Modifier letters as parsed: u, k, h, p (repeatable, up to 3) and S.
struct Modifiers {
  bool user = false;
  bool kernel = false;
  bool hv = false;
  int precise = 0;
  bool sample_read = false;

  bool privilege_given() const { return user || kernel || hv; }
};

// Parses modifier letters; `event` is the text named in errors.
Result<Modifiers> ParseModifiers(std::string_view text, std::string_view event);

// Sets the exclude_* bits and precise_ip of `attr` from `mods`. As in
// perf, naming any of u/k/h excludes the levels not named; naming none
// excludes the kernel only if `exclude_kernel_default`.
void ApplyModifiers(const Modifiers& mods, bool exclude_kernel_default, perf_event_attr* attr);

}  // namespace sample
